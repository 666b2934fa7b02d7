"""A step of one bf16 GEMM and ~300 tiny elementwise ops (a 256 x 256 fp32 state updated by a
long chain of pointwise math), PyTorch eager; --compile runs the same step through
torch.compile (default mode), which fuses the chain.

    python3 eager_storm.py [--compile] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch

N_LINKS = 100           # 3 ops a link (mul, add, tanh): 300 elementwise ops a step


def step(a, b, state, scales, shifts):
    y = a @ b                                       # one GEMM, 4096^3 bf16
    for i in range(N_LINKS):
        state = torch.tanh(state * scales[i] + shifts[i])
    return y, state + y[:256, :256].float()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    dev = "cuda"
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) / 64
    state = torch.randn(256, 256, device=dev)
    scales = [float(1.0 + 0.001 * i) for i in range(N_LINKS)]
    shifts = [float(0.01 * (i % 7)) for i in range(N_LINKS)]
    fn = torch.compile(step) if args.compile else step
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        y, state = fn(a, b, state, scales, shifts)
        state = state.clamp(-1, 1)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
