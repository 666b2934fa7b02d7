"""Greedy decoding one token at a time, at batch 1 and at batch 64 (underfed doctor rules
`launch_bound` and `decode_gemv`; the suite's reproduction: scenario serial_decode, issue #19).

A random decoder of 16 layers at width 4096 (6 GiB of bf16 weights: attention projections,
a GELU MLP of width 4 x 4096, an LM head of 8192 tokens) with a KV cache of 256 positions per
layer. Each step generates one token per sequence: every layer's matrix products run with
M = batch rows, so at batch 1 each is a matrix-vector product that streams its whole weight
matrix from HBM to make one token (cuBLAS on the H200 runs it as a GEMM with a 128 x 8 tile,
nvjet_..._128x8_...). Each step's greedy pick (the argmax of its logits) is the next step's
input, fed back on the device (no host sync).
- eager: batch 1, launched op by op from Python: ~300 kernels a token, most of them tiny, so
  the GPU waits on the host first of all (doctor: launch_bound high);
- graph: batch 1, each step replayed as a CUDA graph: the launch gaps go, the weight stream
  stays: 6 GiB read for one token (doctor: decode_gemv high);
- batched: 64 sequences decoded in lockstep (continuous batching's steady state), replayed as
  a CUDA graph: the same weight stream serves 64 tokens (decode_gemv none). Its step also
  reads the 64 sequences' KV cache, 4 GiB (64 MiB at batch 1), which the printed weight
  bandwidth leaves out.
The cache is a ring of 256 positions, written at the step's position and attended whole,
so that every step has the same shapes (a CUDA graph needs them).

    python3 examples/pytorch/serial_decode.py --variant eager|graph|batched [--steps N]
    build/tools/underfed doctor -- python3 examples/pytorch/serial_decode.py --variant graph
Exit 77 without a CUDA GPU."""
import sys

import torch
import torch.nn.functional as F

import preamble

LAYERS, WIDTH, HEADS, VOCAB, CACHE = 16, 4096, 32, 8192, 256
BATCH = {"eager": 1, "graph": 1, "batched": 64}


def make_weights(gen):
    """Random bf16 weights, scaled so that activations stay O(1) through the layers."""
    def w(rows, cols):
        return (torch.randn(rows, cols, device="cuda", generator=gen) / cols ** 0.5).bfloat16()
    layers = [{"qkv": w(3 * WIDTH, WIDTH), "o": w(WIDTH, WIDTH),
               "up": w(4 * WIDTH, WIDTH), "down": w(WIDTH, 4 * WIDTH)} for _ in range(LAYERS)]
    return layers, w(VOCAB, WIDTH), w(VOCAB, WIDTH)      # layers, embedding, LM head


def decode_step(layers, embed, head, cache, tok, pos):
    """One token per sequence: tok (B,) -> next tok (B,); writes K, V at ring position pos."""
    b, hd = tok.shape[0], WIDTH // HEADS
    x = embed[tok].float()                                       # (B, d) residual, fp32
    for i, lw in enumerate(layers):
        h = F.rms_norm(x, (WIDTH,)).bfloat16()
        q, k, v = F.linear(h, lw["qkv"]).view(b, 3, HEADS, 1, hd).unbind(1)
        cache[i, 0].index_copy_(2, pos, k)                       # (B, H, CACHE, hd)
        cache[i, 1].index_copy_(2, pos, v)
        a = F.scaled_dot_product_attention(q, cache[i, 0], cache[i, 1])
        x = x + F.linear(a.reshape(b, WIDTH), lw["o"]).float()
        h = F.rms_norm(x, (WIDTH,)).bfloat16()
        x = x + F.linear(F.gelu(F.linear(h, lw["up"])), lw["down"]).float()
    logits = F.linear(F.rms_norm(x, (WIDTH,)).bfloat16(), head)
    pos.add_(1).remainder_(CACHE)
    return logits.argmax(dim=-1)


def main():
    args = preamble.parse_args(__doc__, BATCH, steps=200)
    if preamble.no_cuda_gpu():
        return 77
    gen = torch.Generator(device="cuda").manual_seed(0)
    b = BATCH[args.variant]
    layers, embed, head = make_weights(gen)
    cache = torch.randn(LAYERS, 2, b, HEADS, CACHE, WIDTH // HEADS, device="cuda",
                        generator=gen).bfloat16()
    tok = torch.randint(VOCAB, (b,), device="cuda", generator=gen)
    pos = torch.zeros(1, dtype=torch.long, device="cuda")

    def step():                                      # one token per sequence, into tok
        tok.copy_(decode_step(layers, embed, head, cache, tok, pos))
    with torch.inference_mode():
        if args.variant != "eager":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):                   # warm-up before capture, as PyTorch asks
                    step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            step = graph.replay                      # noqa: F811
        half, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for i in range(args.steps):
            if i == args.steps // 2:
                half.record()
            torch.cuda.nvtx.range_push("step")
            step()
            torch.cuda.nvtx.range_pop()
        end.record()
        torch.cuda.synchronize()
    ms = half.elapsed_time(end) / (args.steps - args.steps // 2)
    weights = sum(t.nbytes for lw in layers for t in lw.values()) + head.nbytes   # read a step
    print(f"serial_decode {args.variant}: {ms:.3f} ms/step, batch {b}, "
          f"{b * 1e3 / ms:.0f} tokens/s, weights read at {weights / ms / 1e6:.0f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
