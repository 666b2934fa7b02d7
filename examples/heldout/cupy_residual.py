"""A Jacobi solver for the Poisson equation on a 4096 x 4096 grid in CuPy that checks its
residual every iteration, as a textbook loop does: `float(cp.linalg.norm(r))` reads it back to
the host, which keeps a history of it (a solver would stop on it; this one runs its N steps).

    python3 cupy_residual.py [--check-every K] [--steps N] [--warmup N]

--check-every K: read the residual back every K iterations (default 1). Prints `steps N step_ms
X wall_s Y` (the timed loop, one step an iteration; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

N = 4096


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check-every", type=int, default=1)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if args.check_every < 1:
        p.error("--check-every must be >= 1")
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as e:      # no CuPy or no GPU
        print(f"skipped: {e}", file=sys.stderr)
        return 77
    rs = cp.random.RandomState(0)
    f = rs.standard_normal((N, N), dtype=cp.float32)
    u = cp.zeros((N, N), dtype=cp.float32)
    new = cp.empty_like(u)
    h2 = (1.0 / (N - 1)) ** 2
    history = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                  - h2 * f[1:-1, 1:-1])
        u, new = new, u
        if (i + 1) % args.check_every == 0:
            r = cp.linalg.norm(u - new)
            history.append(float(r))              # waits for the GPU
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    print(f"residual {history[-1] if history else float('nan'):.3e} after {len(history)} checks")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
