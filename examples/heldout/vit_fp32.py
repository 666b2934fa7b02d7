"""A Vision Transformer (torchvision's ViT-B/16, random init) trained in fp32 on random images
at 224 x 224, SGD with momentum: PyTorch's defaults, which leave TF32 off for matrix products.

    python3 vit_fp32.py [--batch B] [--steps N] [--warmup N] [--tf32]

--tf32: torch.backends.cuda.matmul.allow_tf32 = True (the same step on the tensor cores).
Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import torchvision


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--tf32", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(weights=None, num_classes=1000).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (args.batch,), device="cuda")
    model.train()
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {loss.item():.4f} images/s {args.batch * args.steps / loop_s:.0f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
