"""Greedy generation with Hugging Face transformers' `generate` (GPT-2 124M from its config,
random weights, bf16): BATCH prompts of 32 random tokens, 64 new tokens each, several calls.

    python3 hf_generate.py [--batch B] [--calls N] [--new-tokens T]

One step is one generated token (of every sequence): prints tokens/s and
`steps N step_ms X wall_s Y` (N = calls x new tokens; the timed calls; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--calls", type=int, default=4)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--prompt", type=int, default=32)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    config = GPT2Config()
    with torch.device("cuda"):
        model = GPT2LMHeadModel(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config.vocab_size, (args.batch, args.prompt), device="cuda")
    mask = torch.ones_like(ids)
    gen = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False,
               pad_token_id=0)
    with torch.no_grad():
        model.generate(ids, attention_mask=mask, **gen)          # warm-up
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.calls):
            out = model.generate(ids, attention_mask=mask, **gen)
        torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    steps = args.calls * args.new_tokens
    print(f"{args.batch * steps / loop_s:.0f} tokens/s ({tuple(out.shape)})")
    print(f"steps {steps} step_ms {loop_s * 1e3 / steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
