"""A bf16 MLP trained with AdamW on data that lives on the GPU, and between steps the loop's
own Python bookkeeping: a learning-rate schedule, a history of step times, a rolling summary
of them, and a log record serialized every step (nothing read back from the GPU: no sync).

    python3 torch_bookkeeping.py [--steps N] [--warmup N] [--no-host-work]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import json
import math
import statistics
import sys

import torch

BATCH, WIDTH, DEPTH = 2048, 1024, 4


class Bookkeeper:
    """What a training loop keeps about itself: schedule, timings, a log of records."""

    def __init__(self, base_lr, total):
        self.base_lr, self.total, self.times, self.log = base_lr, total, [], []
        self.config = {f"layer{i}.{k}": {"lr_scale": 1.0, "wd": 0.01, "frozen": False}
                       for i in range(384) for k in ("weight", "bias")}

    def lr(self, step):
        warm = min(1.0, (step + 1) / 100)
        return self.base_lr * warm * 0.5 * (1 + math.cos(math.pi * step / self.total))

    def record(self, step, lr):
        self.times.append(time.perf_counter())
        recent = self.times[-2000:]
        deltas = sorted(b - a for a, b in zip(recent, recent[1:])) or [0.0]
        rec = {"step": step, "lr": lr, "median_s": statistics.median(deltas),
               "p90_s": deltas[int(0.9 * (len(deltas) - 1))], "config": self.config}
        self.log.append(json.dumps(rec, sort_keys=True))
        if len(self.log) > 100:
            self.log = self.log[-100:]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-host-work", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 1)).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(BATCH, 1, device="cuda", dtype=torch.bfloat16)
    total = args.warmup + args.steps
    book = Bookkeeper(1e-4, total)
    t0 = None
    for i in range(total):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        lr = book.lr(i)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if not args.no_host_work:
            book.record(i, lr)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
