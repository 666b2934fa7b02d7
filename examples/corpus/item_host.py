"""A regression MLP trained in bf16 with AdamW; after every step the loop reads the loss
(`loss.item()`) and updates its own statistics of the losses in Python (a running mean, an
exponential average, the median of the last 2,000, a log line). --deferred keeps the losses
on the GPU and reads them once after the loop (the same statistics, computed then).

    python3 item_host.py [--deferred] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import statistics
import sys

import torch

BATCH, WIDTH, DEPTH = 4096, 1024, 4


class LossStats:
    def __init__(self):
        self.values, self.ema, self.lines = [], None, []

    def add(self, v):
        self.values.append(v)
        self.ema = v if self.ema is None else 0.98 * self.ema + 0.02 * v
        window = self.values[-2000:]
        med = statistics.median(window)
        mean = sum(window) / len(window)
        self.lines.append(f"loss {v:.5f} ema {self.ema:.5f} mean {mean:.5f} median {med:.5f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--deferred", action="store_true")
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(),
                   torch.nn.Linear(4 * WIDTH, WIDTH)]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 1)).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = x.float().mean(dim=1, keepdim=True).sin().to(torch.bfloat16)
    stats, pending = LossStats(), []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if args.deferred:
            pending.append(loss.detach())
        else:
            stats.add(loss.item())
    if args.deferred:
        for v in torch.stack(pending).float().tolist():
            stats.add(v)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(stats.lines[-1])
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
