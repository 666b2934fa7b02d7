# A PyTorch training loop fed by a DataLoader (num_workers=2, pin_memory, random tensors made in
# the workers) that reads loss.item() every step; prints ms/step and the main thread's OS id.
import argparse, threading, time
import torch
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=120)
a = p.parse_args()


class Random(Dataset):
    def __len__(self):
        return 10 ** 6

    def __getitem__(self, i):
        return torch.randn(1024), torch.randint(0, 10, ())


model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
dl = DataLoader(Random(), batch_size=256, num_workers=2, pin_memory=True)
t0 = None
for i, (x, y) in enumerate(dl):
    if i == 10:
        t0 = time.perf_counter()
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    last = loss.item()
    if i + 1 >= a.steps + 10:
        break
t1 = time.perf_counter()
print(f"loader: {(t1 - t0) * 1e3 / a.steps:.4f} ms/step steps={a.steps} "
      f"main_tid={threading.get_native_id()} loss={last:.4f}")
