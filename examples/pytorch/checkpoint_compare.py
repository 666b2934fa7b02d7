"""What users run, next to checkpoint_recompute: torch.utils.checkpoint around each block of the
scenario's model (L MLP blocks y = x + W2 gelu(W1 LN(x)), d, 4d hidden, T tokens, bf16,
forward + backward from a random top gradient), timed with CUDA events.

Variants: store_all (no checkpoint); checkpoint per block, non-reentrant, with and without
early stop (torch.utils.checkpoint.set_checkpoint_early_stop: on by default, it stops the
recomputation once every tensor the backward needs has been recomputed, so the block's last
GEMM and residual are not re-run); reentrant checkpoint (re-runs the whole block).

    python3 examples/pytorch/checkpoint_compare.py [--d 4096] [--layers 24] [--tokens 8192]
Prints one line per variant: median step ms, spread, peak memory, and the ratio to store_all.
"""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.utils import checkpoint as ckpt


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.w1 = torch.nn.Linear(d, 4 * d, bias=False)
        self.w2 = torch.nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        return x + self.w2(F.gelu(self.w1(self.ln(x)), approximate="tanh"))


def step(blocks, x, top, mode):
    h = x
    for b in blocks:
        if mode == "store_all":
            h = b(h)
        elif mode == "reentrant":
            h = ckpt.checkpoint(b, h, use_reentrant=True)
        else:
            h = ckpt.checkpoint(b, h, use_reentrant=False)
    h.backward(top)


def measure(blocks, x, top, mode, warmup, repeat):
    early = mode != "nonreentrant_no_early_stop"
    with ckpt.set_checkpoint_early_stop(early):
        for _ in range(warmup):
            step(blocks, x, top, mode)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        times = []
        for _ in range(repeat):
            for p in blocks.parameters():
                p.grad = None
            x.grad = None
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            step(blocks, x, top, mode)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
        peak = torch.cuda.max_memory_allocated() - base
    return statistics.median(times), min(times), max(times), peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    dev = "cuda"
    blocks = torch.nn.Sequential(*[Block(a.d) for _ in range(a.layers)]).to(dev, torch.bfloat16)
    x = torch.randn(a.tokens, a.d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    top = torch.randn(a.tokens, a.d, device=dev, dtype=torch.bfloat16)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, d={a.d} L={a.layers} "
          f"T={a.tokens}")
    ref = None
    for mode in ["store_all", "nonreentrant_early_stop", "nonreentrant_no_early_stop",
                 "reentrant", "store_all"]:
        med, lo, hi, peak = measure(blocks, x, top, mode, a.warmup, a.repeat)
        ref = ref or med
        print(f"{mode:28s} step {med:8.2f} ms (min {lo:.2f}, max {hi:.2f})  "
              f"peak over start {peak / 2**30:6.2f} GiB  x store_all {med / ref:.3f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
