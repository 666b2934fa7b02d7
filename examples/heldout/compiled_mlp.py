"""A wide MLP (width 4096, depth 8, batch 8192, bf16) trained with AdamW, its forward and loss
compiled with torch.compile (the default mode: fused elementwise kernels, no CUDA graphs).

    python3 compiled_mlp.py [--steps N] [--warmup N] [--eager]

--eager: the same step without torch.compile. Prints `steps N step_ms X wall_s Y` (the timed
loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch

BATCH, WIDTH, DEPTH = 8192, 4096, 8


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(WIDTH) for _ in range(DEPTH))
        self.head = torch.nn.Linear(WIDTH, 1)

    def forward(self, x):
        for lin, norm in zip(self.layers, self.norms):
            x = x + torch.nn.functional.gelu(lin(norm(x)))
        return self.head(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--eager", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    model = MLP().cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(BATCH, 1, device="cuda", dtype=torch.bfloat16)

    def loss_of(x, y):
        return torch.nn.functional.mse_loss(model(x), y)

    step_loss = loss_of if args.eager else torch.compile(loss_of)
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = step_loss(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {loss.item():.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
