"""A Jacobi solver for the Poisson equation on a 4096 x 4096 grid in CuPy that checks its
residual every iteration, as a textbook loop does: `float(cp.linalg.norm(r))` reads it back to
the host, which keeps a history of it (a solver would stop on it; this one runs its N steps).

    python3 cupy_residual.py [--read-every K] [--fused] [--steps N] [--warmup N]

--read-every K: still compute the residual every iteration, keep it on the GPU and read the
last K back together every K iterations (default 1: each one as it is made): the same GPU work
with one wait in K. --fused: the same arithmetic in four kernels an iteration (the update as one
elementwise kernel, the residual's norm as a row-wise reduction, a sum of its 4096 partials and
a square root) in place of CuPy's expression of ~12 (each a pass over the grid); the reads as --read-every says. Prints `steps N step_ms X wall_s
Y` (the timed loop, one step an iteration; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

N = 4096


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--read-every", type=int, default=1)
    p.add_argument("--fused", action="store_true")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--warmup", type=int, default=20)
    args = p.parse_args()
    if args.read_every < 1:
        p.error("--read-every must be >= 1")
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
    jacobi = cp.ElementwiseKernel(
        "raw float32 u, raw float32 f, float32 h2, int32 n", "raw float32 out",
        "int r = i / (n - 2) + 1, c = i % (n - 2) + 1, k = r * n + c;"
        "out[k] = 0.25f * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1] - h2 * f[k]);",
        "jacobi_update")
    # The norm in two passes: a ReductionKernel gives each output one block, so a reduction to
    # one value would run on one SM; each row's sum of squares is one block, then CuPy's sum.
    row_sq = cp.ReductionKernel("float32 a, float32 b", "float32 y", "(a - b) * (a - b)",
                                "a + b", "y = a", "0", "row_sq")
    history, pending = [], []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        if args.fused:
            jacobi(u, f, cp.float32(h2), cp.int32(N), new, size=(N - 2) * (N - 2))
        else:
            new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                      - h2 * f[1:-1, 1:-1])
        u, new = new, u
        r = cp.sqrt(row_sq(u, new, axis=1).sum()) if args.fused else cp.linalg.norm(u - new)
        if args.read_every == 1:
            history.append(float(r))              # waits for the GPU
        else:
            pending.append(r)
            if len(pending) == args.read_every:
                history.extend(cp.stack(pending).get().tolist())   # one wait for K
                pending = []
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    print(f"residual {history[-1] if history else float('nan'):.3e} after {len(history)} checks")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
