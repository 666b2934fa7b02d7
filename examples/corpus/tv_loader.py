"""ImageNet-style training: ResNet-18 (torchvision, random init) on random images that a
DataLoader augments on the CPU (nothing to decode) (random resized crop, flip, colour jitter,
normalize), bf16 autocast, SGD with momentum.

    python3 tv_loader.py [--workers N] [--batch B] [--steps N] [--warmup N] [--cached-batch]
                         [--keep-loading]

--cached-batch: take one batch from the loader, keep it on the GPU and train on it every step
(the GPU's own step time, with no input pipeline: the usual check of how fast the model alone
runs). --keep-loading (with --cached-batch): a background thread keeps taking batches from the
loader and drops them, so its workers and its pinning thread load the CPU as in the plain run
while the step never waits for them: the step time with the pipeline's CPU load but without its
wait. Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys
import threading

import torch
import torchvision
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2


class RandomImages(Dataset):
    """Images of SIZE x SIZE random pixels (one seed per index), augmented as for training."""

    def __init__(self, n, size, crop):
        self.n, self.size = n, size
        self.tf = v2.Compose([
            v2.RandomResizedCrop(crop, antialias=True),
            v2.RandomHorizontalFlip(),
            v2.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4),
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8, generator=g)
        return self.tf(img), i % 1000


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--crop", type=int, default=176)
    p.add_argument("--cached-batch", action="store_true")
    p.add_argument("--keep-loading", action="store_true")
    args = p.parse_args()
    if args.keep_loading and not args.cached_batch:
        p.error("--keep-loading needs --cached-batch")
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet18(num_classes=1000).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    total = args.warmup + args.steps
    data = RandomImages(total * args.batch, args.size, args.crop)
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                        pin_memory=True, drop_last=True,
                        persistent_workers=args.workers > 0)

    stop = threading.Event()

    def keep_loading():
        while not stop.is_set():
            for _ in loader:
                if stop.is_set():
                    return

    loading = threading.Thread(target=keep_loading, daemon=True)

    def batches():
        if args.cached_batch:
            x, y = next(iter(loader))
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            if args.keep_loading:
                loading.start()
            while True:
                yield x, y
        for x, y in loader:
            yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)

    it = batches()
    model.train()
    t0 = None
    for i in range(total):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        x, y = next(it)
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    stop.set()
    if loading.is_alive():
        loading.join(timeout=10)
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
