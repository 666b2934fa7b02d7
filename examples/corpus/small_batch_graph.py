"""Inference of a small bf16 MLP (8 layers of width 512) on batches of 64, replayed as a CUDA
graph: every kernel is a few thread blocks on a GPU of 132 SMs. --batch sets the batch (the
same model on 16,384 rows fills the GPU).

    python3 small_batch_graph.py [--batch B] [--steps N] [--warmup N]

Prints rows/s and `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch

WIDTH, DEPTH = 512, 8


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=5000)
    p.add_argument("--warmup", type=int, default=50)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda().to(torch.bfloat16).eval()
    x = torch.randn(args.batch, WIDTH, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = model(x)
        t0 = None
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            graph.replay()
        torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"{args.batch * args.steps / loop_s:.0f} rows/s (checksum {y.float().sum().item():.3f})")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
