"""Image classification served one request at a time: torchvision's ResNet-50 (random init) in
eval mode, bf16, under torch.inference_mode(), one 224 x 224 image a step, in eager PyTorch.

    python3 resnet_bs1.py [--batch B] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import torchvision


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(weights=None).cuda().to(torch.bfloat16).eval()
    x = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=torch.bfloat16)
    classes = []
    t0 = None
    with torch.inference_mode():
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            classes.append(model(x).argmax(dim=1))     # kept on the GPU
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"requests/s {args.batch * args.steps / loop_s:.0f}, last class {int(classes[-1][0])}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
