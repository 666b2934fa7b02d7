"""A CuPy array expression on 2^28 float32 elements (1 GiB a tensor), written as NumPy code:
y = exp(-x*x) * a + b * x, then clipped to [-1, 1]: each operator one kernel that reads and writes whole
arrays. --fused runs the same expression as one cupy.fuse kernel.

    python3 cupy_elementwise.py [--fused] [--steps N] [--warmup N]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import cupy as cp

N = 1 << 28


def expr(x, a, b):
    return cp.minimum(cp.maximum(cp.exp(-x * x) * a + b * x, -1.0), 1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fused", action="store_true")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as e:               # noqa: BLE001  (no driver, no GPU)
        print(f"skipped: no CUDA GPU ({e})", file=sys.stderr)
        return 77
    cp.random.seed(0)
    x = cp.random.standard_normal(N, dtype=cp.float32)
    a, b = cp.float32(0.7), cp.float32(0.3)
    fn = cp.fuse(expr) if args.fused else expr
    for _ in range(args.warmup):
        y = fn(x, a, b)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        y = fn(x, a, b)
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    print(f"mean {float(y.mean()):.5f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
