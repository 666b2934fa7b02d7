"""A text classifier trained on sentences tokenized in the training loop: each step makes a
batch of random sentences, splits and looks up their words in a vocabulary in Python, pads them
to the longest and copies the ids to the GPU; a 4-layer Transformer encoder (d = 512, bf16
autocast) and AdamW train on them.

    python3 text_loader.py [--batch B] [--steps N] [--warmup N] [--cached-batch] [--pad-to L]

--cached-batch: tokenize one batch, keep it on the GPU and train on it every step (the model's
own step time, with no input pipeline). --pad-to L: pad every batch to at least L tokens (96,
the longest sentence: one shape for every step, the input pipeline as it is). Prints `steps N step_ms X wall_s Y` (the timed loop;
wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import random
import sys

import torch

VOCAB, WORDS_MIN, WORDS_MAX, CLASSES = 20000, 16, 96, 4


def make_words(rng, n):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(n)]


class Tokenizer:
    """Whitespace words to ids: the vocabulary's words, then a hash bucket for the others."""

    def __init__(self, words):
        self.ids = {w: i + 2 for i, w in enumerate(words)}

    def encode(self, text):
        return [self.ids.get(w.lower().strip(".,;"), 2 + hash(w) % (VOCAB - 2))
                for w in text.split()]


def sentence(rng, words):
    n = rng.randint(WORDS_MIN, WORDS_MAX)
    return " ".join(rng.choice(words) for _ in range(n)) + "."


def make_batch(rng, words, tok, batch, pad_to=0):
    texts = [sentence(rng, words) for _ in range(batch)]
    ids = [tok.encode(t) for t in texts]
    longest = max(max(len(x) for x in ids), pad_to)
    padded = [x + [0] * (longest - len(x)) for x in ids]
    labels = [len(t) % CLASSES for t in texts]
    return torch.tensor(padded), torch.tensor(labels)


class Classifier(torch.nn.Module):
    def __init__(self, d=512, layers=4):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, d, padding_idx=0)
        layer = torch.nn.TransformerEncoderLayer(d, 8, 4 * d, batch_first=True, dropout=0.1)
        self.enc = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(d, CLASSES)

    def forward(self, ids):
        pad = ids == 0
        h = self.enc(self.emb(ids), src_key_padding_mask=pad)
        h = h.masked_fill(pad.unsqueeze(-1), 0).sum(1) / (~pad).sum(1, keepdim=True)
        return self.head(h)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--cached-batch", action="store_true")
    p.add_argument("--pad-to", type=int, default=0)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    rng = random.Random(0)
    words = make_words(rng, VOCAB - 2)
    tok = Tokenizer(words[: VOCAB // 2])          # half the words are in the vocabulary
    model = Classifier().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    cached = None
    if args.cached_batch:
        x, y = make_batch(rng, words, tok, args.batch, args.pad_to)
        cached = (x.cuda(), y.cuda())
    model.train()
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        if cached:
            x, y = cached
        else:
            x, y = make_batch(rng, words, tok, args.batch, args.pad_to)
            x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {loss.item():.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
