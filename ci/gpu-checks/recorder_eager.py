# A PyTorch eager loop of many tiny ops (a launch storm): OPS elementwise ops a step on a small
# tensor, STEPS steps after 10 warm-up steps; prints ms/step (the loop's time / steps, one sync
# at the end), the main thread's OS id, and the process's CPU seconds (all its threads).
# --profile: the warm-up and the timed steps under torch.profiler (CPU and CUDA activities), the
# instrument the corpus's truths come from: what it costs a launch, beside the recorder's.
import argparse, contextlib, threading, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=150)
p.add_argument("--ops", type=int, default=300)
p.add_argument("--profile", action="store_true")
a = p.parse_args()
x = torch.randn(4096, device="cuda")


def step(x):
    for _ in range(a.ops // 2):
        x = x * 1.0001
        x = x + 0.0001
    return x


acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
with (torch.profiler.profile(activities=acts) if a.profile else contextlib.nullcontext()):
    for _ in range(10):
        x = step(x)
    torch.cuda.synchronize()
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(a.steps):
        x = step(x)
    torch.cuda.synchronize()
    t1, c1 = time.perf_counter(), time.process_time()   # before the profiler's own processing
print(f"eager: {(t1 - t0) * 1e3 / a.steps:.4f} ms/step ops={a.ops} steps={a.steps} "
      f"main_tid={threading.get_native_id()} cpu_s={c1 - c0:.3f} wall_s={t1 - t0:.3f} "
      f"sum={float(x.sum()):.3f}" + (" profiled" if a.profile else ""))
