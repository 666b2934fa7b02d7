"""Total-variation denoising of a 4096 x 4096 float32 image in CuPy by gradient descent on the
smoothed ROF energy, sum(sqrt(|grad u|^2 + eps^2)) + lam/2 * sum((u - f)^2), with a
convergence check every iteration as a textbook loop writes it. The image: a piecewise constant
scene (discs and bars) with Gaussian noise (sigma 0.1), made on the GPU. An iteration is one
fused ElementwiseKernel for the whole descent step (the normalized forward-difference gradient
at each pixel and at its left and upper neighbours, its divergence, the fidelity term and the
step, clamped to [0, 1]), a ReductionKernel of the squared change by rows (4096 partial sums),
their sum, and one small ElementwiseKernel that turns the sum into the root-mean-square change
and writes it into a slot of a small array on the GPU. Then the loop waits for the GPU with
`cp.cuda.Stream.null.synchronize()`, reads the change with `float(...)`, appends it to its
history and tests it against the tolerance (0 by default: all N iterations run).

    python3 cupy_stream_sync.py [--size N] [--check-every K] [--tol T] [--steps N] [--warmup N]

--check-every K: the same kernels every iteration, the change still computed every iteration
and kept in its slot of a K-long array on the GPU; the loop waits and reads the K values
together every K iterations (and the last ones after the loop), tests each against the
tolerance then (default 1: each one as it is made). Prints `steps N step_ms X wall_s Y` (the
timed loop, one step an iteration; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

DT, LAM, EPS = 0.01, 10.0, 0.1

FLUX = r"""
__device__ __forceinline__ float2 tv_flux(const float* u, int r, int c, int h, int w,
                                          float eps2) {
    // the forward-difference gradient at (r, c), normalized by sqrt(|grad u|^2 + eps^2);
    // zero across the last column and row (Neumann boundary)
    float uc = u[(long long)r * w + c];
    float gx = c + 1 < w ? u[(long long)r * w + c + 1] - uc : 0.0f;
    float gy = r + 1 < h ? u[(long long)(r + 1) * w + c] - uc : 0.0f;
    float inv = rsqrtf(gx * gx + gy * gy + eps2);
    return make_float2(gx * inv, gy * inv);
}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--check-every", type=int, default=1)
    p.add_argument("--tol", type=float, default=0.0)
    p.add_argument("--steps", type=int, default=40000)
    p.add_argument("--warmup", type=int, default=200)
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
    n, k_every = args.size, args.check_every
    tv_step = cp.ElementwiseKernel(
        "raw float32 u, float32 f, float32 dt, float32 lam, float32 eps2, int32 h, int32 w",
        "float32 out",
        """
        const float* p = &u[0];
        int r = i / w, c = i % w;
        float2 a = tv_flux(p, r, c, h, w, eps2);
        float ax = c > 0 ? tv_flux(p, r, c - 1, h, w, eps2).x : 0.0f;
        float ay = r > 0 ? tv_flux(p, r - 1, c, h, w, eps2).y : 0.0f;
        float dv = (a.x - ax) + (a.y - ay);
        float uc = p[i];
        out = fminf(fmaxf(uc - dt * (lam * (uc - f) - dv), 0.0f), 1.0f);
        """,
        "tv_step", preamble=FLUX)
    sq_change = cp.ReductionKernel("float32 x, float32 x0", "float32 s", "(x - x0) * (x - x0)",
                                   "a + b", "s = a", "0", "sq_change")
    rms = cp.ElementwiseKernel("float32 s, float32 inv_n", "float32 r", "r = sqrtf(s * inv_n)",
                               "rms_change")

    # the noisy scene, on the GPU
    yy, xx = cp.mgrid[0:n, 0:n].astype(cp.float32) / n
    clean = cp.full((n, n), 0.2, dtype=cp.float32)
    for cy, cx, rad, level in ((0.3, 0.3, 0.15, 0.9), (0.65, 0.4, 0.2, 0.6),
                               (0.4, 0.75, 0.1, 0.8)):
        clean[(yy - cy) ** 2 + (xx - cx) ** 2 < rad * rad] = level
    clean[(xx > 0.1) & (xx < 0.9) & (yy > 0.85) & (yy < 0.9)] = 0.5
    f = clean + cp.random.RandomState(0).standard_normal((n, n), dtype=cp.float32) * 0.1
    del yy, xx
    u = f.copy()
    new = cp.empty_like(u)
    changes = cp.zeros(k_every, dtype=cp.float32)
    consts = (cp.float32(DT), cp.float32(LAM), cp.float32(EPS * EPS), cp.int32(n), cp.int32(n))
    inv_count = cp.float32(1.0 / (n * n))
    history = []
    done = 0
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        tv_step(u, f, *consts, new)
        slot = i % k_every
        rms(sq_change(new, u, axis=1).sum(), inv_count, changes[slot])
        u, new = new, u
        done = i + 1
        if k_every == 1:
            cp.cuda.Stream.null.synchronize()
            change = float(changes[0])
            history.append(change)
            if change < args.tol:
                break
        elif slot == k_every - 1:
            cp.cuda.Stream.null.synchronize()
            values = changes.get().tolist()
            history.extend(values)
            if min(values) < args.tol:
                break
    if k_every > 1 and done % k_every:
        history.extend(changes[:done % k_every].get().tolist())
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    timed = done - args.warmup
    err = float(cp.sqrt(cp.mean((u - clean) ** 2)))
    print(f"{n} x {n}, rms change {history[-1]:.3e} after {len(history)} checks, "
          f"rms error to the clean scene {err:.4f} (noisy {0.1:.4f})")
    print(f"steps {timed} step_ms {loop_s * 1e3 / max(timed, 1):.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
