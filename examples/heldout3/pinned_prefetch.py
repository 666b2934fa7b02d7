"""A frame classifier trained from an in-memory dataset through a DataLoader set up the way the
performance guides recommend: num_workers=4, pin_memory=True, persistent_workers=True,
prefetch_factor=4, shuffling, the batches copied to the GPU with non_blocking=True. The
dataset: 16384 samples, each 16 frames of 256 float32 features (precomputed, as from an audio
front end) with a label a frame, made with torch.randn before the loop and held in memory (the
workers, forked, read it; the default collate stacks 1024 samples into a batch of 16384
frames, 16 MB). The model: an MLP over frames, 256 -> 4096, four hidden layers of 4096 with
ReLU, -> 1000 classes (~73 M parameters), bf16 autocast, cross-entropy, AdamW (fused=True).
Each step is ~7 TFLOP of GEMMs; the losses stay on the GPU until the end.

    python3 pinned_prefetch.py [--batch B] [--workers W] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
from torch.utils.data import DataLoader, Dataset

SAMPLES, FRAMES, FEATURES, WIDTH, DEPTH, CLASSES = 16384, 16, 256, 4096, 4, 1000


class FrameDataset(Dataset):
    """Precomputed features and frame labels, all in memory."""

    def __init__(self, n, seed):
        gen = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, FRAMES, FEATURES, generator=gen)
        self.y = torch.randint(0, CLASSES, (n, FRAMES), generator=gen)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class FrameMLP(torch.nn.Module):
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
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    data = FrameDataset(SAMPLES, seed=0)
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=True,
                        persistent_workers=args.workers > 0,
                        prefetch_factor=4 if args.workers > 0 else None)
    model = FrameMLP().cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)

    def batches():
        while True:                      # epochs until the loop has its steps
            for x, y in loader:
                yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)

    stream = batches()
    losses = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        x, y = next(stream)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.view(-1, CLASSES), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    epochs = (args.warmup + args.steps) * args.batch / len(data)
    print(f"loss {torch.stack(losses[:10]).float().mean().item():.4f} -> "
          f"{torch.stack(losses[-10:]).float().mean().item():.4f}, {epochs:.1f} epochs, "
          f"{args.workers} workers")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
