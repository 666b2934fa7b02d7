"""Data-parallel training on 2 GPUs: gradients all-reduced after the backward, and DDP's
bucketed all-reduce under the backward (underfed doctor rule `comm_exposed`; the suite's
reproduction: build/scenarios/allreduce_overlap --explain, variants sequential / bucketed).

An 8-layer bf16 MLP (4096 wide, no biases: 8 gradients of 32 MiB, 256 MiB a step) trained with
SGD on 1536 tokens a rank made up on the GPU, NCCL between the two GPUs (NCCL_NVLS_ENABLE=0).
- broken: no DDP: after loss.backward() the loop all-reduces each gradient: the GPUs compute,
  then communicate; the all-reduce (~0.8 ms at nccl-tests' 330 GB/s) adds to every step;
- fixed: DDP with its default buckets (bucket_cap_mb=25): each layer's gradient is reduced
  while the backward computes the layers below it; only the last bucket is exposed.

    python3 examples/pytorch/ddp_bucketing.py --variant broken|fixed [--steps N]
starts itself under torchrun (python3 -m torch.distributed.run --nproc_per_node=2); under
underfed doctor each rank writes its own records (one file per pid) and is diagnosed.
Exit 77 without 2 CUDA GPUs (before torchrun starts)."""
import os
import sys

import torch
import torch.distributed as dist

import preamble

WIDTH, LAYERS, TOKENS = 4096, 8, 1536
N_GPUS = 2


def launch_under_torchrun(argv):
    """Not a torchrun worker yet: check the GPUs, then become torchrun (same process)."""
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < N_GPUS:
        print(f"skipped: needs {N_GPUS} CUDA GPUs, found {n}", file=sys.stderr)
        return 77
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={N_GPUS}", os.path.abspath(__file__)] + argv
    sys.stdout.flush()
    os.execv(sys.executable, cmd)


def train(variant, steps):
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH, bias=False), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).cuda().to(torch.bfloat16)
    if variant == "fixed":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local],
                                                          bucket_cap_mb=25)
    else:
        for q in model.parameters():        # the same start on every rank, as DDP does
            dist.broadcast(q.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    gen = torch.Generator(device="cuda").manual_seed(1 + rank)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    losses = []
    for step in range(steps):
        if step == steps // 2:
            start.record()
        torch.cuda.nvtx.range_push("step")
        x = torch.randn(TOKENS, WIDTH, device="cuda", dtype=torch.bfloat16, generator=gen)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        if variant == "broken":             # after the whole backward, one by one
            for q in model.parameters():
                dist.all_reduce(q.grad, op=dist.ReduceOp.AVG)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        torch.cuda.nvtx.range_pop()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / (steps - steps // 2)
    print(f"ddp_bucketing {variant} rank {rank}: {ms:.3f} ms/step over the second half, "
          f"last loss {torch.stack(losses)[-1].item():.5f}", flush=True)
    dist.destroy_process_group()
    return 0


def main():
    args = preamble.parse_args(__doc__, ["broken", "fixed"], steps=200)
    if "LOCAL_RANK" not in os.environ:
        return launch_under_torchrun(sys.argv[1:])
    if torch.cuda.device_count() < N_GPUS:
        print(f"skipped: needs {N_GPUS} CUDA GPUs, found {torch.cuda.device_count()}",
              file=sys.stderr)
        return 77
    return train(args.variant, args.steps)


if __name__ == "__main__":
    sys.exit(main())
