"""A small loop with torch.profiler recording CUDA activity in the same process: under the
doctor, CUPTI has two activity clients; the doctor must say so in one line, the program must run on."""
import sys, torch
if not torch.cuda.is_available():
    sys.exit(77)
x = torch.randn(4096, 4096, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
    for step in range(50):
        torch.cuda.nvtx.range_push("step")
        y = x @ x
        y = y * 2 + 1
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
events = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
print(f"torch.profiler saw {len(events)} kinds of CUDA events, {sum(e.count for e in events)} in all")
