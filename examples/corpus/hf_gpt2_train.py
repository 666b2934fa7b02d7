"""GPT-2 (124M, Hugging Face transformers, built from its config with random weights) trained
on random tokens with AdamW: --dtype bf16 (the model in bfloat16) or fp32 (float32, with
PyTorch's default of no TF32 for matrix products).

    python3 hf_gpt2_train.py [--dtype bf16|fp32] [--batch B] [--seq T] [--steps N] [--warmup N]

Prints tokens/s and `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    config = GPT2Config()                       # vocab 50,257, 12 layers, width 768
    with torch.device("cuda"):                  # initialized on the GPU: no CPU init to wait for
        model = GPT2LMHeadModel(config)
    if args.dtype == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    ids = torch.randint(0, config.vocab_size, (args.batch, args.seq), device="cuda")
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"{args.batch * args.seq * args.steps / loop_s:.0f} tokens/s, loss {loss.item():.3f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
