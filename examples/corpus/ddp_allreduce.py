"""Data-parallel training on 2 GPUs the hand-written way: after each backward, every gradient
is all-reduced (NCCL) one after another, then the optimizer steps. --ddp wraps the model in
DistributedDataParallel instead (bucketed all-reduce overlapped with the backward).
Starts itself under torch.distributed.run (2 processes) when not already a rank.

    python3 ddp_allreduce.py [--ddp] [--steps N] [--warmup N]

Rank 0 prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import os
import subprocess
import sys

import torch
import torch.distributed as dist

BATCH, WIDTH, DEPTH = 4096, 4096, 8


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    if torch.cuda.device_count() < 2:
        print(f"skipped: needs 2 GPUs, this machine has {torch.cuda.device_count()}",
              file=sys.stderr)
        return 77
    if "LOCAL_RANK" not in os.environ:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
               os.path.abspath(__file__)] + sys.argv[1:]
        return subprocess.call(cmd)
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 1)).cuda().to(torch.bfloat16)
    if args.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(BATCH, 1, device="cuda", dtype=torch.bfloat16)
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if not args.ddp:
            for prm in model.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= 2
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    if rank == 0:
        print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
              f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
