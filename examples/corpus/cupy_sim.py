"""A particle simulation in CuPy: 4M particles advanced on the GPU each step (gravity, drag,
a bounce at the floor), and on the host, between steps, the simulation's own bookkeeping in
Python and NumPy: a scheduler of timed events (emitters switching on and off, a probe log)
kept in a heap and a dict, as such code is written. Nothing is read back from the GPU.
--no-host-work leaves the bookkeeping out (the GPU's own step time).

    python3 cupy_sim.py [--steps N] [--warmup N] [--no-host-work]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import heapq
import sys

import cupy as cp
import numpy as np

N = 1 << 22
DT = 1e-3


class Scheduler:
    """Timed events of the scene: each step pops the due ones and schedules their follow-ups."""

    def __init__(self, n_emitters, seed=0):
        self.rng = np.random.default_rng(seed)
        self.heap = [(float(t), i, "toggle") for i, t in
                     enumerate(self.rng.uniform(0, 0.05, n_emitters))]
        heapq.heapify(self.heap)
        self.state = {i: False for i in range(n_emitters)}
        self.log = []

    def advance(self, now):
        fired = 0
        while self.heap and self.heap[0][0] <= now:
            t, i, kind = heapq.heappop(self.heap)
            self.state[i] = not self.state[i]
            heapq.heappush(self.heap, (t + float(self.rng.exponential(0.01)), i, kind))
            fired += 1
        active = sum(1 for v in self.state.values() if v)
        weights = np.array([1.0 if v else 0.1 for v in self.state.values()])
        self.log.append((now, fired, active, float(np.percentile(weights, 90))))
        return active


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--no-host-work", action="store_true")
    args = p.parse_args()
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as e:               # noqa: BLE001
        print(f"skipped: no CUDA GPU ({e})", file=sys.stderr)
        return 77
    cp.random.seed(0)
    pos = cp.random.uniform(0, 1, (3, N), dtype=cp.float32)
    vel = cp.random.standard_normal((3, N), dtype=cp.float32) * 0.1
    sched = Scheduler(4000)
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        vel[2] -= 9.81 * DT
        vel *= 0.999
        pos += vel * DT
        below = pos[2] < 0
        vel[2] = cp.where(below, -0.8 * vel[2], vel[2])
        pos[2] = cp.abs(pos[2])
        if not args.no_host_work:
            sched.advance(i * DT)
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
