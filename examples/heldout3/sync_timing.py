"""Training a small ResNet on 64 x 64 images with a loop that times every step, as training
scripts do to log their throughput: `torch.cuda.synchronize()` at the end of each step and
`time.perf_counter()` around it, the step's milliseconds and images per second put in a metrics
dict with the step and the learning rate. The network is built by hand with torch.nn (no
torchvision): a CIFAR-style ResNet-18 (a 3 x 3 stem of 64 channels at full resolution, four
stages of two basic blocks, 64-128-256-512 channels, global pooling, 100 classes), fp32 with
cuDNN's default TF32 convolutions, cudnn.benchmark on, SGD with Nesterov momentum and a cosine
learning rate set every step. Each step's batch of 32 is augmented on the CPU from an in-memory
pool of 2048 uint8 images of 72 x 72: a random 64 x 64 crop, a horizontal flip and a cutout
square per image (a Python loop over the batch), a brightness and contrast jitter,
normalization to float, then `pin_memory()` and a copy with non_blocking=True. The loss is
summed on the GPU and printed every 100 steps with `.item()` (one wait in 100, in both runs).

    python3 sync_timing.py [--batch B] [--steps N] [--warmup N] [--no-step-timing]

--no-step-timing: no synchronize and no clock at each step (the loop timed as a whole): the
same augmentation, training steps, metrics without the step times, and the same loss prints.
Prints `steps N step_ms X wall_s Y` (the timed loop, the whole loop's time over its steps in
both runs; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import math
import statistics
import sys

import torch
import torch.nn.functional as F

POOL, SIZE, CROP, CUTOUT, CLASSES, LOG_EVERY = 2048, 72, 64, 16, 100, 100
MEAN = torch.tensor([0.49, 0.48, 0.45]).view(1, 3, 1, 1)
STD = torch.tensor([0.25, 0.24, 0.26]).view(1, 3, 1, 1)


class BasicBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.shortcut = torch.nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet18(torch.nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False),
                                        torch.nn.BatchNorm2d(64), torch.nn.ReLU(inplace=True))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def augment(pool, labels, batch, gen):
    """A batch of random crops, flips and cutouts of pool images, jittered and normalized,
    in pinned memory."""
    idx = torch.randint(0, pool.shape[0], (batch,), generator=gen)
    offsets = torch.randint(0, SIZE - CROP + 1, (batch, 2), generator=gen).tolist()
    holes = torch.randint(0, CROP - CUTOUT + 1, (batch, 2), generator=gen).tolist()
    flips = (torch.rand(batch, generator=gen) < 0.5).tolist()
    out = torch.empty(batch, 3, CROP, CROP, dtype=torch.uint8)
    for k, i in enumerate(idx.tolist()):
        dy, dx = offsets[k]
        img = pool[i, :, dy:dy + CROP, dx:dx + CROP]
        out[k] = img.flip(2) if flips[k] else img
        hy, hx = holes[k]
        out[k, :, hy:hy + CUTOUT, hx:hx + CUTOUT] = 0
    x = out.float().div_(255.0)
    bright = torch.empty(batch, 1, 1, 1).uniform_(0.8, 1.2, generator=gen)
    contrast = torch.empty(batch, 1, 1, 1).uniform_(0.8, 1.2, generator=gen)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = ((x - mean) * contrast + mean * bright).clamp_(0.0, 1.0)
    x = (x - MEAN) / STD
    return x.pin_memory(), labels[idx].pin_memory()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-step-timing", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    gen = torch.Generator().manual_seed(0)
    pool = torch.randint(0, 256, (POOL, 3, SIZE, SIZE), dtype=torch.uint8, generator=gen)
    labels = torch.randint(0, CLASSES, (POOL,), generator=gen)
    model = ResNet18(CLASSES).cuda()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    total = args.warmup + args.steps
    timing = not args.no_step_timing
    metrics = {"step": [], "lr": [], "step_ms": [], "images_per_s": []}
    running = torch.zeros((), device="cuda")
    t0 = None
    for i in range(total):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        t_step = time.perf_counter()
        x, y = augment(pool, labels, args.batch, gen)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        lr = 0.05 * (1.0 + math.cos(math.pi * i / total))
        for group in opt.param_groups:
            group["lr"] = lr
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running += loss.detach()
        metrics["step"].append(i)
        metrics["lr"].append(lr)
        if timing:
            torch.cuda.synchronize()
            dt = time.perf_counter() - t_step
            metrics["step_ms"].append(dt * 1e3)
            metrics["images_per_s"].append(args.batch / dt)
        if (i + 1) % LOG_EVERY == 0:
            line = f"step {i + 1} loss {running.item() / LOG_EVERY:.4f} lr {lr:.4f}"
            if timing:
                recent = metrics["step_ms"][-LOG_EVERY:]
                line += (f" step_ms median {statistics.median(recent):.3f}"
                         f" img/s {statistics.median(metrics['images_per_s'][-LOG_EVERY:]):.0f}")
            print(line)
            running.zero_()
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    if timing:
        timed = metrics["step_ms"][args.warmup:]
        print(f"per-step clock: median {statistics.median(timed):.3f} ms, "
              f"max {max(timed):.3f} ms over {len(timed)} steps")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
