"""A small GPT-style language model trained with torch.compile, with a periodic evaluation:
4 pre-LayerNorm Transformer blocks (width 512, 8 heads, MLP 2048, causal
scaled_dot_product_attention), a vocabulary of 8192, the cross-entropy loss inside the model's
forward (nanoGPT style), bf16 autocast, AdamW with gradient clipping. Training batches are 16
random token sequences of 512 (one shape throughout). Every 100 training steps the loop runs an
evaluation pass, as training scripts do: model.eval(), torch.no_grad(), 4 held-out batches of
64 sequences of 512 (a larger batch, since no activations are kept for a backward), the mean
loss read and printed, then model.train() and back to training. The model is compiled as
`torch.compile(model)`: the default mode, Dynamo's defaults. Inductor's on-disk caches
(TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR) are put in a fresh temporary folder, removed at
exit, so that every run compiles as the first run on a fresh machine does.

    python3 eval_recompile.py [--batch B] [--eval-batch B] [--eval-every N] [--steps N]
                              [--warmup N] [--warm-eval]

What to expect: the warm-up compiles the training graph (forward and backward, batch 16, grad
enabled, training mode). The first evaluation inside the timed loop fails that graph's guards
(grad mode off, eval mode, batch 64), so Dynamo traces the model again and Inductor compiles an
inference graph (with the batch dimension made dynamic by automatic dynamic shapes): seconds
with the GPU idle, once. Back in training the first graph's guards pass again, and later
evaluations reuse the inference graph.

--warm-eval: the warm-up also runs one evaluation pass (the same eval batches) after its
training steps, before the clock starts, so the inference graph is compiled there; the timed
loop does the same training steps and the same evaluations, without the compile. Prints
`steps N step_ms X wall_s Y` (the timed loop, evaluations included; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import atexit
import os
import shutil
import sys
import tempfile

_CACHE = tempfile.mkdtemp(prefix="eval_recompile_cache_")
atexit.register(shutil.rmtree, _CACHE, True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = _CACHE
os.environ["TRITON_CACHE_DIR"] = os.path.join(_CACHE, "triton")

import torch
import torch.nn.functional as F

VOCAB, WIDTH, HEADS, LAYERS, MAX_POS = 8192, 512, 8, 4, 1024


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
        return F.cross_entropy(logits.view(-1, VOCAB).float(), targets.reshape(-1))


def make_batch(batch, seq, gen=None):
    tokens = torch.randint(0, VOCAB, (batch, seq + 1), device="cuda", generator=gen)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def evaluate(model, eval_batches):
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        losses = [model(x, y) for x, y in eval_batches]
    model.train()
    return torch.stack(losses).float().mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--eval-batch", type=int, default=64)
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--warm-eval", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    held_out = torch.Generator(device="cuda").manual_seed(1234)
    eval_batches = [make_batch(args.eval_batch, args.seq, held_out)
                    for _ in range(args.eval_batches)]
    model = TinyGPT().cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    model = torch.compile(model)
    losses, evals = [], []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            if args.warm_eval:
                evaluate(model, eval_batches)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        x, y = make_batch(args.batch, args.seq)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        step = i - args.warmup + 1
        if step > 0 and step % args.eval_every == 0:
            val = evaluate(model, eval_batches)
            train = torch.stack(losses[-args.eval_every:]).mean().item()
            evals.append(val)
            print(f"step {step:5d}  train loss {train:.4f}  eval loss {val:.4f}", flush=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    try:
        graphs = torch._dynamo.utils.counters["stats"].get("unique_graphs", "?")
    except Exception:       # an internal counter: only reported
        graphs = "?"
    print(f"{len(evals)} evaluations in the loop, eval warmed before the clock: "
          f"{'yes' if args.warm_eval else 'no'}, graphs compiled {graphs}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
