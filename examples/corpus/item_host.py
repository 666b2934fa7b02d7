"""A regression MLP trained in bf16 with AdamW. After every step the loop reads the loss
(`loss.item()`) and does its own bookkeeping in Python: a log record of the step (the loss,
its running mean and exponential average, the learning rate, the run's per-layer settings)
serialized to JSON and kept. --deferred keeps the losses on the GPU, writes the same record
without them every step, and reads all losses once after the loop (the same statistics,
computed then).

    python3 item_host.py [--deferred] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import json
import statistics
import sys

import torch

# BATCH 65536 (4096 in the corpus's rounds of 2026-12-01, 16384 on 2026-12-02): the GPU's step
# (~24 ms expected on an H200) must exceed all of the host's work a step (its launches, ~5 ms,
# and the log record, 5 ms on a Xeon build host), so that without the sync the host runs
# ahead and the GPU never waits. At 16384 (a ~5.5 ms GPU step) it did not: --deferred was
# host-bound too (busy 86 %), and the sync's cost was small and hard to tell from the host's.
BATCH, WIDTH, DEPTH = 65536, 1024, 4


class RunLog:
    """What the loop keeps about itself each step: a JSON record, and the loss statistics."""

    def __init__(self):
        self.values, self.ema, self.records = [], None, []
        self.settings = {f"block{i}.{part}.{k}": v for i in range(DEPTH)
                         for part in ("up", "down") for k, v in
                         (("lr_scale", 1.0), ("weight_decay", 0.01), ("frozen", False),
                          ("init_std", 0.02), ("dtype", "bfloat16"))}
        self.settings.update({f"tag{i}": f"run-{i:05d}" for i in range(16000)})

    def add_loss(self, v):
        self.values.append(v)
        self.ema = v if self.ema is None else 0.98 * self.ema + 0.02 * v
        window = self.values[-2000:]
        return {"loss": v, "ema": self.ema, "mean": sum(window) / len(window),
                "median": statistics.median(window)}

    def record(self, step, lr, loss_stats=None):
        rec = {"step": step, "lr": lr, "settings": self.settings, **(loss_stats or {})}
        self.records.append(json.dumps(rec, sort_keys=True))
        if len(self.records) > 50:
            self.records = self.records[-50:]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--deferred", action="store_true")
    p.add_argument("--steps", type=int, default=200)
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
    run_log, pending = RunLog(), []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        lr = opt.param_groups[0]["lr"]
        if args.deferred:
            pending.append(loss.detach())
            run_log.record(i, lr)
        else:
            last = run_log.add_loss(loss.item())       # waits for the GPU, every step
            run_log.record(i, lr, last)
    if args.deferred:
        for v in torch.stack(pending).float().tolist():
            last = run_log.add_loss(v)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {last['loss']:.5f} ema {last['ema']:.5f} median {last['median']:.5f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
