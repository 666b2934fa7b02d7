"""A Lightning (2.x) LightningModule: a regression MLP (bf16-mixed) trained with AdamW on
batches already on the GPU, the loss shown in the progress bar (`self.log(..., prog_bar=True)`,
as the Lightning docs do it). --no-bar-loss: the same training without logging the loss.

    python3 lightning_train.py [--no-bar-loss] [--steps N] [--warmup N]

A callback times the steps after the warm-up; prints `steps N step_ms X wall_s Y`
(the timed steps; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import lightning as L
from torch.utils.data import DataLoader, Dataset

BATCH, WIDTH, DEPTH = 8192, 2048, 8


class DeviceBatches(Dataset):
    """Batches made once on the GPU (random data), served whole (batch_size=None)."""

    def __init__(self, n):
        g = torch.Generator(device="cuda").manual_seed(0)
        self.x = [torch.randn(BATCH, WIDTH, device="cuda", generator=g) for _ in range(4)]
        self.y = [x.mean(dim=1, keepdim=True).sin() for x in self.x]
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.x[i % 4], self.y[i % 4]


class Regressor(L.LightningModule):
    def __init__(self, bar_loss):
        super().__init__()
        layers = []
        for _ in range(DEPTH):
            layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()]
        self.net = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 1))
        self.bar_loss = bar_loss

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.bar_loss:
            self.log("loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


class StepTimer(L.Callback):
    def __init__(self, warmup):
        self.warmup, self.t0, self.steps = warmup, None, 0

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        if batch_idx == self.warmup:
            torch.cuda.synchronize()
            self.t0 = time.perf_counter()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        if self.t0 is not None:
            self.steps += 1

    def on_train_end(self, trainer, module):
        torch.cuda.synchronize()
        loop_s = time.perf_counter() - self.t0
        print(f"steps {self.steps} step_ms {loop_s * 1e3 / self.steps:.4f} "
              f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--no-bar-loss", action="store_true")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    total = args.warmup + args.steps
    loader = DataLoader(DeviceBatches(total), batch_size=None, shuffle=False)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="bf16-mixed", max_epochs=1,
                        max_steps=total, logger=False, enable_checkpointing=False,
                        enable_model_summary=False, callbacks=[StepTimer(args.warmup)])
    trainer.fit(Regressor(bar_loss=not args.no_bar_loss), train_dataloaders=loader)
    return 0


if __name__ == "__main__":
    sys.exit(main())
