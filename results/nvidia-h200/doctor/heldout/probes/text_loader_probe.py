"""session probe: text_loader's loop split into make_batch (host) and the rest, per process."""
import os, sys, time
sys.path.insert(0, "examples/heldout")
import text_loader as tl
acc = {"mb": 0.0, "n": 0}
orig = tl.make_batch
def timed(*a, **k):
    t = time.perf_counter(); r = orig(*a, **k); acc["mb"] += time.perf_counter() - t; acc["n"] += 1; return r
tl.make_batch = timed
sys.argv = ["text_loader.py"] + sys.argv[1:]
import torch
rc = tl.main()
print(f"probe make_batch_ms {acc['mb'] * 1e3 / max(acc['n'], 1):.3f} n {acc['n']} threads {torch.get_num_threads()} "
      f"affinity {len(os.sched_getaffinity(0))} hashseed {os.environ.get('PYTHONHASHSEED', '-')} "
      f"load {open('/proc/loadavg').read().split()[0]}", flush=True)
sys.exit(rc)
