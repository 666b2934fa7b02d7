"""A launch-bound loop and its torch.compile'd twin (underfed doctor rule `launch_bound`;
the suite's reproduction: build/scenarios/launch_storm --explain).

Each step runs 200 tiny elementwise updates (400 kernels of ~1 us on 4096 values) and one
large bf16 GEMM. Eager (--variant broken) launches every one of them from Python: the host
needs several us per launch, the GPU finishes each tiny kernel in ~1 us and waits for the next.
Compiled (--variant fixed, mode="reduce-overhead") fuses the 400 ops into one kernel and
replays the step as a CUDA graph: one launch a step, the host runs ahead, the GPU stays busy.
Compilation (seconds) happens in the first steps; the doctor leaves those out of the steady
window and says how long they took.

    python3 examples/pytorch/launch_storm.py --variant broken|fixed [--steps N]
    build/tools/underfed doctor -- python3 examples/pytorch/launch_storm.py --variant broken
Exit 77 without a CUDA GPU."""
import sys

import torch

import preamble


class StormStep(torch.nn.Module):
    """One step: a chain of tiny elementwise ops, then a GEMM; returns a scalar loss."""

    def __init__(self, n_ops, gemm_m, gemm_k):
        super().__init__()
        self.n_ops = n_ops
        self.register_buffer("x", torch.randn(4096))
        self.register_buffer("a", torch.randn(gemm_m, gemm_k, dtype=torch.bfloat16))
        self.register_buffer("w", torch.randn(gemm_k, gemm_k, dtype=torch.bfloat16))

    def forward(self):
        y = self.x
        for _ in range(self.n_ops):
            y = y * 1.0001 + 0.0001          # two kernels each in eager mode
        return (self.a @ self.w).float().mean() + y.sum()


def main():
    args = preamble.parse_args(__doc__, ["broken", "fixed"], steps=300)
    if preamble.no_cuda_gpu():
        return 77
    model = StormStep(n_ops=200, gemm_m=8192, gemm_k=4096).cuda()
    if args.variant == "fixed":
        model = torch.compile(model, mode="reduce-overhead")
    half, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.inference_mode():
        for step in range(args.steps):
            if step == args.steps // 2:     # time the second half (compile long done), no sync
                half.record()
            torch.cuda.nvtx.range_push("step")
            if args.variant == "fixed":
                torch.compiler.cudagraph_mark_step_begin()
            loss = model()
            torch.cuda.nvtx.range_pop()
        end.record()
        torch.cuda.synchronize()
    ms = half.elapsed_time(end) / (args.steps - args.steps // 2)
    print(f"launch_storm {args.variant}: {ms:.3f} ms/step over the second half, "
          f"loss {float(loss):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
