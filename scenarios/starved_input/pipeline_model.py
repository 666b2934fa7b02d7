"""A model of the `workers` variant's pipeline (starved_input_pipeline.cu), to compare two ways a
producer could pick its staging buffer: GPU busy % over a long run, per choice.

    python3 scenarios/starved_input/pipeline_model.py [--workers N] [--gpu-ms G]
                                                      [--batch-ms P ...] [--jitter J]

N producers and 2N + 2 buffers; the GPU runs one step of G ms per batch, in batch order; a
producer needs P ms (uniformly jittered by +-J) to make a batch; the host takes each batch as
soon as it and every earlier one are ready, enqueues its copy (which runs as its step starts)
and gives the buffer back at once: the host runs ahead without limit, as in the trace pass.
A producer may refill a buffer only once that buffer's last copy has run.
  old: the lowest-numbered free buffer, the batch number taken at once (what the pipeline does);
  new: the buffer given back longest ago, the batch number taken after the wait (modelled
       only, not adopted: README, "workers").
Prints, per P and choice, the GPU busy % (min-max over 5 seeds). A model: what it leaves out
(the host's own time, copy time, the OS) it cannot show."""
import argparse
import heapq
import random


def busy_pct(choice, n_workers, gpu_ms, batch_ms, jitter, seed, steps=3000, warm=500):
    rng = random.Random(seed)
    n_slots = 2 * n_workers + 2
    free, freed_seq, copy_done = list(range(n_slots)), [0] * n_slots, [0.0] * n_slots
    ready, events, idle_workers = {}, [], list(range(n_workers))
    next_produce = next_consume = seq = 0
    gpu_free_at, busy, t_first = 0.0, 0.0, None

    def make_time():
        return batch_ms * (1 + rng.uniform(-jitter, jitter))

    def claim(t):
        nonlocal next_produce
        while idle_workers and free:
            w = idle_workers.pop()
            s = min(free) if choice == "old" else min(free, key=lambda i: (freed_seq[i], i))
            free.remove(s)
            start = max(t, copy_done[s])
            if choice == "old":
                heapq.heappush(events, (start + make_time(), "made", (w, s, next_produce)))
                next_produce += 1
            else:
                heapq.heappush(events, (start, "waited", (w, s, -1)))

    claim(0.0)
    while next_consume < steps:
        t, kind, (w, s, b) = heapq.heappop(events)
        if kind == "waited":
            heapq.heappush(events, (t + make_time(), "made", (w, s, next_produce)))
            next_produce += 1
            continue
        ready[b] = s
        idle_workers.append(w)
        while next_consume in ready:
            s2 = ready.pop(next_consume)
            start = max(t, gpu_free_at)
            if next_consume >= warm:
                t_first = start if t_first is None else t_first
                busy += gpu_ms
            gpu_free_at = start + gpu_ms
            copy_done[s2] = start
            seq += 1
            freed_seq[s2] = seq
            free.append(s2)
            next_consume += 1
        claim(t)
    return 100.0 * busy / (gpu_free_at - t_first)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--gpu-ms", type=float, default=1.29)
    p.add_argument("--batch-ms", type=float, nargs="+", default=[6.27, 8.0, 9.0, 9.8])
    p.add_argument("--jitter", type=float, default=0.5)
    a = p.parse_args()
    if a.workers < 1 or a.gpu_ms <= 0 or min(a.batch_ms) <= 0 or not 0 <= a.jitter < 1:
        p.error("--workers >= 1, --gpu-ms and --batch-ms > 0, 0 <= --jitter < 1")
    print(f"{a.workers} producers, {2 * a.workers + 2} buffers, GPU step {a.gpu_ms} ms, "
          f"jitter +-{a.jitter:.0%}")
    for pm in a.batch_ms:
        cells = []
        for choice in ("old", "new"):
            v = [busy_pct(choice, a.workers, a.gpu_ms, pm, a.jitter, s) for s in range(5)]
            cells.append(f"{choice} {min(v):.1f}-{max(v):.1f} %")
        print(f"batch {pm:5.2f} ms: " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
