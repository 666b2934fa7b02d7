"""A DataLoader that tokenizes in __getitem__ on the training process, and its fixed twins
(underfed doctor rule `starved_input`; the suite's reproduction: build/scenarios/starved_input
--explain, whose variants are the same three).

Each sample is text made up on the spot (no dataset needed) and tokenized by a pure-Python
hash tokenizer: slow host work, like a real tokenizer called per sample. The model is a small
bf16 MLP language model (a frozen embedding, 4 MLP blocks, an 8K-token head), trained with
AdamW; losses stay on the device (the example of .item() every step is item_sync.py).
- broken: num_workers=0: the training process tokenizes every batch while the GPU waits;
- workers: num_workers=8 (prefetch_factor 4): the workers tokenize ahead, in parallel;
- pretokenized: every sample tokenized once before the loop (start-up, left out by the doctor).
The tokenizer's cost is set at start-up to 2.5 x the GPU time of one step (measured on this
machine), so that the broken loop starves and the workers keep up on any host.

Why 8 workers and batches of 64 (the first H200 run, a673bcb, had 4 workers and batches of
32, and read starved_input moderate, 6.3 % of the step, for `workers`): four workers tokenize
at 4 / 2.5 = 1.6x the GPU's rate in steady state and the first step (the workers' start) is
left out, so the mean rate alone does not starve the GPU. What is left is the training
process's own time between steps: its share of each batch (the pin-memory thread unpickles
it, getting the shared-memory file descriptor from the worker's resource-sharer thread,
which needs the busy worker's GIL; it pins it; the main thread sends the next index through a
multiprocessing queue), competing for the GIL of the thread that launches the step, on top
of the step's own launches. The device waits for that whenever the host has no lead over it,
and the rule counts idle before a step's first work whatever the host was doing (item_sync's
fixed loop, which loads no data, read starved_input moderate too). So the fixed twin gets
slack on both sides: 8 workers (3.2x: a worker is idle most of the time, its hand-over is
immediate, the queue stays full) and a GPU step twice as long for the same launches and the
same per-batch work on the host (the tokenizer's cost follows the GPU step, so the broken
loop starves as before). Not re-run on a GPU yet. The loop prints how long each next() took:
next() calls that wait are starvation; idle at the step boundary with fast next() calls is
the host's own time between steps.

    python3 examples/pytorch/dataloader_tokenize.py --variant broken|workers|pretokenized
    build/tools/underfed doctor -- python3 examples/pytorch/dataloader_tokenize.py --variant broken
Exit 77 without a CUDA GPU."""
import random
import sys
import time

import torch

import preamble

VOCAB, SEQ, BATCH, WIDTH = 8192, 256, 64, 1024   # BATCH 64: see "Why 8 workers"
TOKENIZE_PER_STEP = 2.5         # tokenizing one batch costs this many GPU steps
WORDS = ["".join(random.Random(i).choice("abcdefghijklmnopqrstuvwxyz")
                 for _ in range(3 + i % 9)) for i in range(5000)]


def tokenize(text):
    """A slow pure-Python tokenizer: one hash per word, character by character."""
    ids = []
    for word in text.split():
        h = 0
        for ch in word:
            h = (h * 31 + ord(ch)) % 1000003
        ids.append(h % VOCAB)
    return ids


class TextDataset(torch.utils.data.Dataset):
    """Sample i: n_words of text from seed i, tokenized in __getitem__ (or once, up front)."""

    def __init__(self, n_samples, n_words, pretokenize):
        self.n_samples, self.n_words = n_samples, n_words
        self.tokens = [self.encode(i) for i in range(n_samples)] if pretokenize else None

    def encode(self, i):
        rng = random.Random(i)
        ids = tokenize(" ".join(rng.choice(WORDS) for _ in range(self.n_words)))
        ids = (ids * (SEQ // max(len(ids), 1) + 2))[:SEQ + 1]
        return torch.tensor(ids, dtype=torch.long)

    def __len__(self):
        return self.n_samples

    def __getitem__(self, i):
        return self.tokens[i] if self.tokens is not None else self.encode(i)


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, WIDTH)
        self.emb.weight.requires_grad_(False)       # no embedding backward (it may sync)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(),
                                torch.nn.Linear(4 * WIDTH, WIDTH)) for _ in range(4))
        self.head = torch.nn.Linear(WIDTH, VOCAB)

    def forward(self, ids):
        h = self.emb(ids)
        for block in self.blocks:
            h = h + block(h)
        return self.head(h)


def train_step(model, opt, batch):
    batch = batch.cuda(non_blocking=True)
    logits = model(batch[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB).float(),
                                             batch[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


def words_per_sample(model, opt):
    """The text length whose tokenization costs TOKENIZE_PER_STEP GPU steps per batch."""
    batch = torch.randint(VOCAB, (BATCH, SEQ + 1))
    for _ in range(3):
        train_step(model, opt, batch)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(5):
        train_step(model, opt, batch)
    torch.cuda.synchronize()
    gpu_step_s = (time.perf_counter() - t) / 5
    probe = TextDataset(16, 256, pretokenize=False)
    t = time.perf_counter()
    for i in range(16):
        probe.encode(i)
    per_word_s = (time.perf_counter() - t) / (16 * 256)
    n_words = int(TOKENIZE_PER_STEP * gpu_step_s / (BATCH * per_word_s))
    print(f"calibration: {gpu_step_s * 1e3:.2f} ms/step on the GPU; {n_words} words/sample "
          f"(tokenizing a batch: {n_words * BATCH * per_word_s * 1e3:.1f} ms)")
    return max(n_words, 16)


def main():
    args = preamble.parse_args(__doc__, ["broken", "workers", "pretokenized"], steps=150)
    if preamble.no_cuda_gpu():
        return 77
    torch.manual_seed(0)
    model = TinyLM().cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=1e-4)
    n_words = words_per_sample(model, opt)
    data = TextDataset(args.steps * BATCH, n_words, pretokenize=args.variant == "pretokenized")
    workers = 8 if args.variant == "workers" else 0
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=False, pin_memory=True,
                                         num_workers=workers,
                                         prefetch_factor=4 if workers else None)
    losses, next_ms = [], []
    t = time.perf_counter()
    batches = iter(loader)
    for _ in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        t_next = time.perf_counter()
        batch = next(batches)               # num_workers=0: tokenized here, GPU waiting
        next_ms.append((time.perf_counter() - t_next) * 1e3)
        losses.append(train_step(model, opt, batch))
        torch.cuda.nvtx.range_pop()
    mean_loss = torch.stack(losses).mean().item()     # read once, after the loop
    ms = (time.perf_counter() - t) * 1e3 / args.steps
    print(f"dataloader_tokenize {args.variant}: {ms:.3f} ms/step (whole loop), "
          f"mean loss {mean_loss:.4f}")
    later = sorted(next_ms[1:]) or [0.0]              # the first waits for the workers' start
    print(f"next(): first {next_ms[0]:.1f} ms; then median {later[len(later) // 2]:.3f} ms, "
          f"max {later[-1]:.3f} ms, {sum(x > 1.0 for x in later)} of {len(later)} over 1 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
