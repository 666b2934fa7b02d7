"""Training a small BERT-style sequence classifier on text of varying length with dynamic
padding: Hugging Face transformers' BertForSequenceClassification built from a BertConfig (6
layers, hidden 512, 8 heads, MLP 2048, vocabulary 30522, 2 labels, random init: no download),
trained in eager PyTorch with bf16 autocast, gradient clipping and AdamW with a linear warm-up.
The dataset is 8192 pre-tokenized examples of random token ids ([CLS] ... [SEP]) whose lengths
are drawn uniformly from 64..512, held on the CPU as a tokenized dataset with its torch format
set would be. A DataLoader (no workers, pin_memory=True: the Trainer's defaults) takes batches of
32 from a length-grouped batch sampler (as the Trainer's group_by_length does: shuffled, cut
into megabatches of 50 batches, each sorted by length and split, then the batches' order
shuffled), and its collate function pads each batch to its own longest sequence with an
attention mask (dynamic padding, as DataCollatorWithPadding does), so the padded length changes
from batch to batch across 64..512. The pinned batches are copied to the GPU with
non_blocking=True; the losses stay on the GPU until the end.

    python3 hf_dynamic_pad.py [--batch B] [--steps N] [--warmup N]

No reference run: torch.profiler is the instrument. Prints `steps N step_ms X wall_s Y` (the
timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import random
import sys

import torch
from torch.utils.data import DataLoader, Dataset
import transformers

SAMPLES, MIN_LEN, MAX_LEN, LABELS = 8192, 64, 512, 2
PAD_ID, CLS_ID, SEP_ID = 0, 101, 102


class TokenizedDataset(Dataset):
    """Examples as a tokenizer would leave them: input_ids of varying length and a label."""

    def __init__(self, n, vocab, seed):
        rng = random.Random(seed)
        gen = torch.Generator().manual_seed(seed)
        self.lengths = [rng.randint(MIN_LEN, MAX_LEN) for _ in range(n)]
        self.input_ids = []
        for length in self.lengths:
            ids = torch.randint(1000, vocab, (length,), generator=gen)
            ids[0], ids[-1] = CLS_ID, SEP_ID
            self.input_ids.append(ids)
        self.labels = [rng.randrange(LABELS) for _ in range(n)]

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "label": self.labels[i]}


class LengthGroupedBatches:
    """Batches of indices of similar length, a new grouping every epoch."""

    def __init__(self, lengths, batch, seed, mega=50):
        self.lengths, self.batch, self.mega = lengths, batch, mega
        self.rng = random.Random(seed)

    def __len__(self):
        return len(self.lengths) // self.batch

    def __iter__(self):
        order = list(range(len(self.lengths)))
        self.rng.shuffle(order)
        size = self.batch * self.mega
        batches = []
        for start in range(0, len(order), size):
            group = sorted(order[start:start + size], key=lambda i: self.lengths[i], reverse=True)
            batches += [group[j:j + self.batch]
                        for j in range(0, len(group) - self.batch + 1, self.batch)]
        self.rng.shuffle(batches)
        return iter(batches)


def pad_collate(features):
    """Pads to the longest sequence of the batch, with an attention mask."""
    longest = max(f["input_ids"].numel() for f in features)
    ids = torch.full((len(features), longest), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(features), longest), dtype=torch.long)
    for row, f in enumerate(features):
        n = f["input_ids"].numel()
        ids[row, :n] = f["input_ids"]
        mask[row, :n] = 1
    return {"input_ids": ids,
            "token_type_ids": torch.zeros_like(ids),
            "attention_mask": mask,
            "labels": torch.tensor([f["label"] for f in features], dtype=torch.long)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    transformers.set_seed(0)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=512, num_hidden_layers=6,
                                     num_attention_heads=8, intermediate_size=2048,
                                     max_position_embeddings=MAX_LEN, num_labels=LABELS)
    model = transformers.BertForSequenceClassification(config).cuda()
    model.train()
    data = TokenizedDataset(SAMPLES, config.vocab_size, seed=0)
    loader = DataLoader(data, batch_sampler=LengthGroupedBatches(data.lengths, args.batch, seed=0),
                        collate_fn=pad_collate, pin_memory=True)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    sched = transformers.get_linear_schedule_with_warmup(opt, 20, args.warmup + args.steps)

    def batches():
        while True:                      # epochs until the loop has its steps
            for batch in loader:
                yield {k: v.to("cuda", non_blocking=True) for k, v in batch.items()}

    stream = batches()
    losses, lengths = [], []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        batch = next(stream)
        lengths.append(batch["input_ids"].shape[1])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    timed = lengths[args.warmup:]
    print(f"loss {torch.stack(losses[:10]).float().mean().item():.4f} -> "
          f"{torch.stack(losses[-10:]).float().mean().item():.4f}, padded lengths "
          f"{min(timed)}..{max(timed)} (mean {sum(timed) / len(timed):.0f}, "
          f"{len(set(timed))} distinct)")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
