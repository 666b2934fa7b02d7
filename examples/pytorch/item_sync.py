"""loss.item() every step, and its twin that keeps the losses on the device (underfed doctor
rule `host_sync`; the suite's scenarios show the same stall in starved_input's `sync`).

A bf16 MLP regression trained with AdamW on data that lives on the GPU. Each step the loop
also does some Python work of its own before it launches anything (a learning-rate schedule,
metrics, logging: here a busy loop set at start-up to 30 % of the time of one step, as in
the host_sync scenario's matrix point). The batch is large enough that the GPU's step is
several times PyTorch's own launch work (127 kernels a step), so that without the sync the
host really can run ahead.
- broken: loss.item() at the end of every step: the host waits until the GPU has finished
  the step, then does its Python work while the GPU has nothing queued: the GPU idles for it;
- fixed: the losses stay on the device and are read once after the loop: the host runs ahead,
  its Python work overlaps the GPU's previous steps.
Both make the same kernels; the doctor tells them apart by where the GPU idles: right after a
sync that waited for it.

    python3 examples/pytorch/item_sync.py --variant broken|fixed [--steps N]
    build/tools/underfed doctor -- python3 examples/pytorch/item_sync.py --variant broken
Exit 77 without a CUDA GPU."""
import math
import sys
import time

import torch

import preamble

# BATCH 32768 (8192 until 2026-12-01): at 8192 the GPU step (~5.8 ms on the H200) was about
# what the host needed to launch it, and the fixed twin still starved (doctor: starved_input
# high, busy 63 %): its host work had no GPU time to hide under.
BATCH, WIDTH, BLOCKS, N_DATA = 32768, 1024, 8, 65536
HOST_WORK_SHARE = 0.3           # the loop's own Python work per step, x the step time


def host_work(seconds):
    """The loop's own Python work (stands for schedules, metrics, logging): a busy loop that
    runs until `seconds` of wall time have passed. Timed by the clock, not counted in
    iterations: a count calibrated once ran at 18 % of the step instead of 30 % on an H200
    host whose CPU ran the loop faster later than during the calibration (2026-12-01)."""
    acc, i, end = 0.0, 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        acc += math.sin(i * 1e-3) * 1e-6
        i += 1
    return acc


def make_model():
    blocks = [torch.nn.Sequential(torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(),
                                  torch.nn.Linear(4 * WIDTH, WIDTH)) for _ in range(BLOCKS)]
    return torch.nn.Sequential(*blocks, torch.nn.Linear(WIDTH, 1)).cuda().to(torch.bfloat16)


def train_step(model, opt, data, target, gen):
    idx = torch.randint(N_DATA, (BATCH,), device="cuda", generator=gen)
    loss = torch.nn.functional.mse_loss(model(data[idx]).float().squeeze(1), target[idx])
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


def calibrate(model, opt, data, target, gen):
    """Seconds of host_work per step: HOST_WORK_SHARE of one step's GPU time."""
    for _ in range(3):
        train_step(model, opt, data, target, gen)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(5):
        train_step(model, opt, data, target, gen)
    torch.cuda.synchronize()
    gpu_step_s = (time.perf_counter() - t) / 5
    host_s = HOST_WORK_SHARE * gpu_step_s
    print(f"calibration: {gpu_step_s * 1e3:.2f} ms/step on the GPU; host work "
          f"{host_s * 1e3:.2f} ms/step")
    return host_s


def main():
    args = preamble.parse_args(__doc__, ["broken", "fixed"], steps=200)
    if preamble.no_cuda_gpu():
        return 77
    torch.manual_seed(0)
    gen = torch.Generator(device="cuda").manual_seed(0)
    data = torch.randn(N_DATA, WIDTH, device="cuda", dtype=torch.bfloat16)
    target = data.float().mean(dim=1).sin()
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    host_s = calibrate(model, opt, data, target, gen)
    losses = []
    t = time.perf_counter()
    for _ in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        host_work(host_s)
        loss = train_step(model, opt, data, target, gen)
        if args.variant == "broken":
            losses.append(loss.item())      # waits for the GPU, every step
        else:
            losses.append(loss)             # stays on the device
        torch.cuda.nvtx.range_pop()
    if args.variant == "fixed":
        losses = torch.stack(losses).tolist()   # one read, after the loop
    ms = (time.perf_counter() - t) * 1e3 / args.steps
    print(f"item_sync {args.variant}: {ms:.3f} ms/step, last loss {losses[-1]:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
