"""Greedy decoding with a plain-PyTorch decoder (random bf16 weights: 8 layers of width 4096,
32 heads, a KV cache ring of 256 positions, vocabulary 32,000), one token per step for BATCH
sequences, the step captured once as a CUDA graph and replayed (as one writes a fast decode
loop by hand).

    python3 decode_graph.py [--batch B] [--steps N] [--warmup N]

Prints tokens/s and `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import torch.nn.functional as F

D, LAYERS, HEADS, VOCAB, CTX = 4096, 8, 32, 32000, 256
HD = D // HEADS


def rms_norm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * w


class Decoder:
    def __init__(self, batch, dev):
        def w(*shape):
            return torch.randn(*shape, device=dev, dtype=torch.bfloat16) * 0.02
        self.emb, self.head, self.norm = w(VOCAB, D), w(VOCAB, D), torch.ones(D, device=dev,
                                                                              dtype=torch.bfloat16)
        self.layers = [dict(qkv=w(3 * D, D), o=w(D, D), up=w(4 * D, D), down=w(D, 4 * D),
                            n1=self.norm.clone(), n2=self.norm.clone()) for _ in range(LAYERS)]
        self.k = torch.zeros(LAYERS, batch, HEADS, CTX, HD, device=dev, dtype=torch.bfloat16)
        self.v = torch.zeros_like(self.k)
        self.tok = torch.zeros(batch, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.batch = batch

    def step(self):
        """One token for every sequence: reads self.tok and self.pos, writes the next token
        into self.tok and advances self.pos around the ring."""
        b = self.batch
        h = self.emb[self.tok]
        for i, L in enumerate(self.layers):
            q, k, v = (rms_norm(h, L["n1"]) @ L["qkv"].t()).view(b, 3, HEADS, HD).unbind(1)
            self.k[i].index_copy_(2, self.pos, k.unsqueeze(2))
            self.v[i].index_copy_(2, self.pos, v.unsqueeze(2))
            a = F.scaled_dot_product_attention(q.unsqueeze(2), self.k[i], self.v[i])
            h = h + a.reshape(b, D) @ L["o"].t()
            h = h + F.silu(rms_norm(h, L["n2"]) @ L["up"].t()) @ L["down"].t()
        logits = rms_norm(h, self.norm) @ self.head.t()
        self.tok.copy_(logits.argmax(-1))
        self.pos.add_(1).remainder_(CTX)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    with torch.no_grad():
        dec = Decoder(args.batch, "cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):             # warm-up before capture, as the docs say
            for _ in range(3):
                dec.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            dec.step()
        t0 = None
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            graph.replay()
        torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"{args.batch * args.steps / loop_s:.0f} tokens/s")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
