"""Fine-tuning a BERT-base encoder for sequence classification with mixed precision: Hugging Face
transformers' BertForSequenceClassification built from a BertConfig (hidden 768, 12 layers, 12
heads, random init: no download), batches of 32 sequences of 128 random token ids with their
attention masks and labels, fp16 autocast with a GradScaler, AdamW with a linear warm-up, as
the usual fine-tuning recipe does. The batches are made on the GPU before the loop and taken
in turn.

    python3 bert_amp.py [--batch B] [--seq L] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import torch
import transformers

POOL, LABELS = 4, 2


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    transformers.set_seed(0)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                                     num_attention_heads=12, intermediate_size=3072,
                                     max_position_embeddings=512, num_labels=LABELS)
    model = transformers.BertForSequenceClassification(config).cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    sched = transformers.get_linear_schedule_with_warmup(opt, 10, args.warmup + args.steps)
    scaler = torch.amp.GradScaler("cuda")
    batches = []
    for _ in range(POOL):
        ids = torch.randint(1000, config.vocab_size, (args.batch, args.seq), device="cuda")
        ids[:, 0] = 101                                  # [CLS]
        mask = torch.ones(args.batch, args.seq, dtype=torch.long, device="cuda")
        labels = torch.randint(0, LABELS, (args.batch,), device="cuda")
        batches.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    losses = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        batch = batches[i % POOL]
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"loss {torch.stack(losses).float().mean().item():.4f}, "
          f"loss scale {scaler.get_scale():.0f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
