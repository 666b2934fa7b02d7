"""Greedy generation at batch 1 with a hand-written decoder-only transformer in eager PyTorch
(random bf16 weights): a LLaMA-style model of 8 pre-RMSNorm blocks, width 1024, 16 heads of
64, rotary position embeddings, SwiGLU MLP (hidden 2816), vocabulary 32,000, a separate output
head, nn.Module and nn.Linear throughout, no torch.compile and no CUDA graph. Each block keeps a
pre-allocated KV cache (512 positions) written in place. Eight random prompts (16 to 64
tokens) are taken in turn: a prompt is prefilled in one forward (causal attention over its
positions) whose last logits give the first new token, and then each of the next 255 tokens
is one forward of one position (its keys and values written into the cache, attention over
the cache up to it), the next token the argmax of the logits, kept on the GPU and fed back;
256 new tokens a prompt, whose ids are read back (`.tolist()`) when the prompt is done.

    python3 torch_decode_b1.py [--steps N] [--warmup N]

One step is one generated token (the first of each prompt's includes its prefill); the default
warm-up is one whole prompt, so the timed loop starts at a prompt's beginning. Prints tokens/s
and `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import random
import sys

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D, LAYERS, HEADS, FFN = 32000, 1024, 8, 16, 2816
HD = D // HEADS
MAX_LEN, NEW_TOKENS, PROMPTS = 512, 256, 8


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.type_as(x) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wqkv = nn.Linear(D, 3 * D, bias=False)
        self.wo = nn.Linear(D, D, bias=False)
        self.register_buffer("cache_k", torch.zeros(1, HEADS, MAX_LEN, HD), persistent=False)
        self.register_buffer("cache_v", torch.zeros(1, HEADS, MAX_LEN, HD), persistent=False)

    def forward(self, x, pos, cos, sin):
        b, n, _ = x.shape
        q, k, v = self.wqkv(x).view(b, n, 3, HEADS, HD).unbind(2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        self.cache_k[:b, :, pos:pos + n] = k
        self.cache_v[:b, :, pos:pos + n] = v
        keys = self.cache_k[:b, :, :pos + n]
        values = self.cache_v[:b, :, :pos + n]
        y = F.scaled_dot_product_attention(q, keys, values, is_causal=n > 1)
        return self.wo(y.transpose(1, 2).reshape(b, n, D))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, FFN, bias=False)
        self.w3 = nn.Linear(D, FFN, bias=False)
        self.w2 = nn.Linear(FFN, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(D)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(D)
        self.mlp = MLP()

    def forward(self, x, pos, cos, sin):
        x = x + self.attn(self.attn_norm(x), pos, cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HD, 2).float() / HD))
        angles = torch.outer(torch.arange(MAX_LEN).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, idx, pos):
        """Logits of the last position of idx (batch, positions), whose first token is at pos."""
        n = idx.size(1)
        x = self.tok_emb(idx)
        cos, sin = self.cos[pos:pos + n], self.sin[pos:pos + n]
        for block in self.blocks:
            x = block(x, pos, cos, sin)
        return self.head(self.norm(x[:, -1:]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=1024)
    p.add_argument("--warmup", type=int, default=NEW_TOKENS)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    rng = random.Random(0)
    with torch.device("cuda"):
        model = Decoder()
    model = model.to(torch.bfloat16).eval()
    prompts = [torch.randint(0, VOCAB, (1, rng.randint(16, 64)), device="cuda")
               for _ in range(PROMPTS)]
    gen = torch.zeros(1, NEW_TOKENS, dtype=torch.long, device="cuda")
    completions = []
    t0 = None
    with torch.inference_mode():
        pos, tok = 0, None
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            t = i % NEW_TOKENS
            if t == 0:                                  # a new prompt: prefill it
                prompt = prompts[(i // NEW_TOKENS) % PROMPTS]
                logits = model(prompt, 0)
                pos = prompt.size(1)
            else:                                       # one position: the last new token
                logits = model(tok.view(1, 1), pos)
                pos += 1
            tok = logits[:, -1].argmax(-1)
            gen[:, t] = tok
            if t == NEW_TOKENS - 1:
                completions.append(gen[0].tolist())
        torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    last = completions[-1] if completions else gen[0].tolist()
    print(f"{args.steps / loop_s:.0f} tokens/s at batch 1, {len(completions)} completions of "
          f"{NEW_TOKENS} tokens, {len(set(last))} distinct ids in the last")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
