"""An MLP trainer that keeps its GPU memory low: each step it also computes a metric on a large
temporary (the batch's hidden activations, concatenated), and after the step it hands the
allocator's cached blocks back to the driver (`torch.cuda.empty_cache()`), as scripts do to
keep `nvidia-smi` low or to avoid fragmentation. bf16, AdamW.

    python3 empty_cache.py [--keep-cache] [--steps N] [--warmup N]

--keep-cache: the same steps without empty_cache(). Prints `steps N step_ms X wall_s Y` (the
timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch

BATCH, WIDTH, DEPTH = 4096, 2048, 6


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keep-cache", action="store_true")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU())
              for _ in range(DEPTH)]
    model = torch.nn.ModuleList(blocks).cuda().to(torch.bfloat16)
    head = torch.nn.Linear(WIDTH, 1).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(BATCH, 1, device="cuda", dtype=torch.bfloat16)
    metrics = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        h, hidden = x, []
        for b in model:
            h = b(h)
            hidden.append(h)
        loss = torch.nn.functional.mse_loss(head(h), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            acts = torch.cat([a.detach().float() for a in hidden], dim=1)   # ~200 MB
            metrics.append(acts.abs().mean())                               # stays on the GPU
        del acts, hidden, h
        if not args.keep_cache:
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {loss.item():.4f} activation mean {torch.stack(metrics).mean().item():.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
