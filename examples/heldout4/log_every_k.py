"""An MLP classifier trained in eager PyTorch with the usual logging: every 10 steps the loss is
read with `loss.item()` into a history, and every 100 steps a line with the mean of the last
ten logged losses and the time per step since the previous line is printed. The model: 1024
input features -> 4096, three hidden layers of 4096 with ReLU, -> 1000 classes (~59 M
parameters), bf16 autocast, cross-entropy, AdamW. The data: 4 batches of 16384 rows made with
torch.randn on the GPU before the loop and taken in turn, so each step is ~6 TFLOP of GEMMs
(about 10 ms on an H200) and nothing but the launches comes from the host.

    python3 log_every_k.py [--batch B] [--steps N] [--warmup N] [--no-log]

--no-log: the same steps, the loss of every 10th step kept on the GPU (loss.detach()) instead
of read, no lines printed in the loop; the kept losses are read after the loop. Prints
`steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import torch.nn.functional as F

FEATURES, WIDTH, DEPTH, CLASSES, POOL = 1024, 4096, 3, 1000, 4
LOG_EVERY, PRINT_EVERY = 10, 100


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layers = [torch.nn.Linear(FEATURES, WIDTH), torch.nn.ReLU()]
        for _ in range(DEPTH):
            layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(WIDTH, CLASSES))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=16384)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-log", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    data = [(torch.randn(args.batch, FEATURES, device="cuda"),
             torch.randint(0, CLASSES, (args.batch,), device="cuda")) for _ in range(POOL)]
    model = MLP().cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    history, kept = [], []
    t0 = None
    t_line = time.perf_counter()
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        x, y = data[i % POOL]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if args.no_log:
            if i % LOG_EVERY == 0:
                kept.append(loss.detach())
            continue
        if i % LOG_EVERY == 0:
            history.append(loss.item())
        if i % PRINT_EVERY == 0:
            now = time.perf_counter()
            recent = history[-(PRINT_EVERY // LOG_EVERY):]
            print(f"step {i:5d}  loss {sum(recent) / len(recent):.4f}  "
                  f"{(now - t_line) * 1e3 / PRINT_EVERY:.2f} ms/step", flush=True)
            t_line = now
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    if args.no_log:
        history = torch.stack(kept).float().tolist()
    print(f"loss {sum(history[:10]) / len(history[:10]):.4f} -> "
          f"{sum(history[-10:]) / len(history[-10:]):.4f}, {len(history)} losses logged, "
          f"{'kept on the GPU' if args.no_log else 'read every ' + str(LOG_EVERY) + ' steps'}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
