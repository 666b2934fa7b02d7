"""A small GPT-style language model trained with torch.compile on batches whose length changes:
4 pre-LayerNorm Transformer blocks (width 512, 8 heads, MLP 2048, causal
scaled_dot_product_attention), a vocabulary of 8192, the cross-entropy loss inside the model's
forward (nanoGPT style), bf16 autocast, AdamW. Each step's batch is 32 random token sequences
of one length, drawn from 12 lengths (384, 400, ..., 560) as a loader that groups sequences of
similar length gives them, not padded to a fixed length. The model is compiled as
`torch.compile(model)`: the default mode, dynamic=None, torch._dynamo.config left as it is.
Inductor's on-disk caches (TORCHINDUCTOR_CACHE_DIR, its Triton cache, and Dynamo's local
profile of which dimensions were dynamic) are put in a fresh temporary folder, removed at exit,
so that every run compiles as the first run on a fresh machine does: a second process of the
same program would otherwise find the first one's kernels and its profile there.

    python3 compile_dynamic.py [--batch B] [--steps N] [--warmup N] [--fixed-length]

--fixed-length: every batch padded on the right to the longest length (560; the padded targets
ignored by the loss, which the causal attention keeps the real positions from seeing): one
shape, compiled once in the warm-up; the same sequences and the same loss, with more arithmetic
a step (the padded positions, ~19 % more tokens on average), so it measures the compiler's
share from below. Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start).

What to expect (Dynamo's defaults in torch 2.11): the warm-up steps repeat the first batch's
length, so the warm-up compiles one graph with static shapes (the forward, then its backward at
the first backward). The first timed step with another length fails the guard on the sequence
length, and automatic dynamic shapes (torch._dynamo.config.automatic_dynamic_shapes, on by
default) recompile forward and backward with that dimension symbolic: one recompilation inside
the timed loop (Dynamo's tracing, AOTAutograd, Inductor's code generation and the Triton
compiles of its kernels: seconds), and the later lengths run that dynamic graph without
compiling again. It is one recompilation, not one a length: recompile_limit (8) is not reached,
and a warm-up that saw two lengths would have done it before the clock started. The loop's
other cost of new shapes: the first use of a cuBLAS or attention kernel picked for a new length
loads that kernel then. With automatic dynamic shapes off (or dynamic=False) each new length
would compile on its own until the eighth, and later ones would run eagerly."""
import time
T_START = time.perf_counter()
import argparse
import atexit
import os
import random
import shutil
import sys
import tempfile

_CACHE = tempfile.mkdtemp(prefix="compile_dynamic_cache_")
atexit.register(shutil.rmtree, _CACHE, True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = _CACHE
os.environ["TRITON_CACHE_DIR"] = os.path.join(_CACHE, "triton")

import torch
import torch.nn.functional as F

VOCAB, WIDTH, HEADS, LAYERS, MAX_POS = 8192, 512, 8, 4, 1024
LENGTHS = list(range(384, 561, 16))             # 12 lengths


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(WIDTH)
        self.qkv = torch.nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = torch.nn.Linear(WIDTH, WIDTH)
        self.ln2 = torch.nn.LayerNorm(WIDTH)
        self.fc = torch.nn.Linear(WIDTH, 4 * WIDTH)
        self.out = torch.nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, WIDTH)
        self.pos = torch.nn.Embedding(MAX_POS, WIDTH)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = torch.nn.LayerNorm(WIDTH)
        self.head = torch.nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx, targets):
        t = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, VOCAB).float(), targets.reshape(-1),
                               ignore_index=-100)


def make_batch(batch, length, fixed):
    seq = torch.randint(0, VOCAB, (batch, length + 1), device="cuda")
    x, y = seq[:, :-1].contiguous(), seq[:, 1:].contiguous()
    if fixed:
        longest = max(LENGTHS)
        xp = torch.zeros(batch, longest, dtype=x.dtype, device="cuda")
        yp = torch.full((batch, longest), -100, dtype=y.dtype, device="cuda")
        xp[:, :length], yp[:, :length] = x, y
        x, y = xp, yp
    return x, y


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--fixed-length", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    rng = random.Random(0)
    lengths = [rng.choice(LENGTHS) for _ in range(args.steps)]
    model = TinyGPT().cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    model = torch.compile(model)
    losses = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        length = lengths[0] if i < args.warmup else lengths[i - args.warmup]
        x, y = make_batch(args.batch, length, args.fixed_length)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    try:
        graphs = torch._dynamo.utils.counters["stats"].get("unique_graphs", "?")
    except Exception:       # an internal counter: only reported
        graphs = "?"
    print(f"loss {torch.stack(losses[:10]).mean().item():.4f} -> "
          f"{torch.stack(losses[-10:]).mean().item():.4f}, {len(set(lengths))} lengths in the "
          f"loop, {'padded to ' + str(max(LENGTHS)) if args.fixed_length else 'unpadded'}, "
          f"graphs compiled {graphs}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
