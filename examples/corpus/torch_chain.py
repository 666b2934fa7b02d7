"""A bias-GELU-dropout-scale-residual block written op by op in PyTorch eager, on 1 GiB fp32
activations (2^28 elements): gelu(x + b), dropout, * c, + r: five kernels, each reading and
writing the whole tensor.

    python3 torch_chain.py [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import torch.nn.functional as F

ROWS, COLS = 65536, 4096        # 2^28 fp32 elements: 1 GiB


def block(x, b, c, r):
    h = F.gelu(x + b)
    h = F.dropout(h, p=0.1, training=True)
    return h * c + r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device="cuda")
    r = torch.randn(ROWS, COLS, device="cuda")
    b = torch.randn(COLS, device="cuda")
    c = torch.randn(COLS, device="cuda")
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        out = block(x, b, c, r)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    del out
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
