"""Tone detection in unevenly sampled recordings of different lengths with a hand-written CuPy
RawKernel: each recording is n samples at jittered times t_j = (j + u_j) / n (u_j uniform in
[0, 0.9)) of a tone of a random whole frequency plus unit Gaussian noise, and its spectrum is
the direct Fourier sum over the samples, sum_j y_j exp(-2 pi i f t_j), at 8192 trial
frequencies f = 1..8192 (uneven sampling: no FFT). The kernel tiles the samples through shared
memory, a thread a frequency and a block row a chunk of 16384 samples, and adds its partial
sums with atomicAdd; the power's argmax is the detected frequency, read back for each
recording (`int(...)`) and checked against the tone. The recordings' lengths are 100 values
from 1,000,000 to 3,970,000 samples (steps of 30,000), in a fixed shuffled order that the
loop cycles through (400 steps by default: every length is seen four times). The kernel's
source has the length baked in as a compile-time constant (`#define N <n>`, formatted into the
source), as one does for speed, and the RawKernel for each length is made when that length
first comes and kept in a dict: each new length compiles a kernel with NVRTC the first time it
is used, inside the timed loop (the warm-up sees only the first length). CuPy's on-disk kernel
cache (CUPY_CACHE_DIR) is a fresh temporary folder, removed at exit, and the driver's JIT cache
is off (CUDA_CACHE_DISABLE=1), so that every run compiles as the first run on a fresh machine
does; CUPY_CACHE_IN_MEMORY is left unset.

    python3 cupy_rawkernel_sizes.py [--steps N] [--warmup N] [--size-arg]

--size-arg: the same kernel source with N defined as the kernel's int argument (which the baked
kernels receive too and ignore): one kernel for all lengths, compiled in the warm-up; the same
recordings and the same arithmetic. Prints `steps N step_ms X wall_s Y` (the timed loop, one
step a recording; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import atexit
import os
import shutil
import sys
import tempfile

_CACHE = tempfile.mkdtemp(prefix="cupy_rawkernel_sizes_cache_")
atexit.register(shutil.rmtree, _CACHE, True)
os.environ["CUPY_CACHE_DIR"] = _CACHE
os.environ["CUDA_CACHE_DISABLE"] = "1"

import numpy as np

NFREQ, TILE, CHUNK = 8192, 256, 16384
LENGTHS = [1_000_000 + 30_000 * k for k in range(100)]
AMP = 0.5

KERNEL_BODY = r"""
#define TILE 256
#define CHUNK 16384

extern "C" __global__ void __launch_bounds__(TILE)
uneven_dft(const float* __restrict__ t, const float* __restrict__ y,
           const float* __restrict__ freq, const int nfreq, const int n_arg,
           float* __restrict__ re, float* __restrict__ im)
{
    __shared__ float st[TILE];
    __shared__ float sy[TILE];
    const int f = blockIdx.x * TILE + threadIdx.x;
    const float w = f < nfreq ? 6.283185307f * freq[f] : 0.0f;
    const int begin = blockIdx.y * CHUNK;
    const int end = min(begin + CHUNK, N);
    float acc_re = 0.0f, acc_im = 0.0f;
    for (int j0 = begin; j0 < end; j0 += TILE) {
        const int j = j0 + threadIdx.x;
        st[threadIdx.x] = j < end ? t[j] : 0.0f;
        sy[threadIdx.x] = j < end ? y[j] : 0.0f;
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            float s, c;
            sincosf(w * st[k], &s, &c);
            acc_re = fmaf(sy[k], c, acc_re);
            acc_im = fmaf(-sy[k], s, acc_im);
        }
        __syncthreads();
    }
    if (f < nfreq) {
        atomicAdd(re + f, acc_re);
        atomicAdd(im + f, acc_im);
    }
}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--size-arg", action="store_true")
    args = p.parse_args()
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception:           # no CuPy or no GPU
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77

    kernels = {}

    def dft_kernel(n):
        key = "n_arg" if args.size_arg else n
        if key not in kernels:
            kernels[key] = cp.RawKernel(f"#define N {key}\n" + KERNEL_BODY, "uneven_dft")
        return kernels[key]

    make_recording = cp.ElementwiseKernel(
        "float32 jitter, float32 noise, float32 inv_n, float32 w0, float32 phase, float32 amp",
        "float32 t, float32 y",
        """
        t = ((float)i + jitter) * inv_n;
        y = amp * cosf(w0 * t + phase) + noise;
        """,
        "make_recording")

    rng = np.random.RandomState(0)
    order = [LENGTHS[k] for k in rng.permutation(len(LENGTHS))]
    tones = rng.randint(100, NFREQ - 100, size=args.warmup + args.steps)
    phases = rng.uniform(0.0, 2.0 * np.pi, size=args.warmup + args.steps)
    longest = max(LENGTHS)
    gen = cp.random.RandomState(1)
    jitter = gen.uniform(0.0, 0.9, longest, dtype=cp.float32)
    noise = gen.standard_normal(longest, dtype=cp.float32)
    t_buf = cp.empty(longest, dtype=cp.float32)
    y_buf = cp.empty(longest, dtype=cp.float32)
    freqs = cp.arange(1, NFREQ + 1, dtype=cp.float32)
    spec = cp.empty((2, NFREQ), dtype=cp.float32)

    found = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        n = order[max(i - args.warmup, 0) % len(order)]    # the warm-up: the first length
        t, y = t_buf[:n], y_buf[:n]
        make_recording(jitter[:n], noise[:n], np.float32(1.0 / n),
                       np.float32(2.0 * np.pi * tones[i]), np.float32(phases[i]),
                       np.float32(AMP), t, y)
        spec.fill(0)
        grid = (NFREQ // TILE, -(-n // CHUNK))
        dft_kernel(n)(grid, (TILE,), (t, y, freqs, np.int32(NFREQ), np.int32(n),
                                      spec[0], spec[1]))
        power = spec[0] * spec[0] + spec[1] * spec[1]
        detected = int(cp.argmax(power)) + 1
        found.append(detected == tones[i])
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    timed = found[args.warmup:]
    print(f"{len(timed)} recordings, {len(set(order[:args.steps]))} lengths in the loop, "
          f"{len(kernels)} kernels compiled, tone found in {sum(timed)} of {len(timed)} "
          f"({'size as argument' if args.size_arg else 'size baked in'})")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
