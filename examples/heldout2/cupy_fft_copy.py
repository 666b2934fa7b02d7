"""Fourier downsampling of a stream of camera frames in CuPy: each step takes the next 4096 x
4096 float32 frame (64 MB) from host memory (a ring of 4 frames made with NumPy before the
loop, as a reader thread would fill it), uploads it with cp.asarray, low-passes it in the
frequency domain (fft2, the central 1024 x 1024 frequencies kept and weighted by a 2-D Hann
window, ifft2: an ideal 4x decimation) and downloads the 1024 x 1024 result (4 MB) with
cp.asnumpy into the host's list of results.

    python3 cupy_fft_copy.py [--size N] [--out-size M] [--steps N] [--warmup N] [--resident]

--resident: the ring of frames uploaded once before the loop and kept on the GPU: the same
transform of the same frames and the same download of every result, without the uploads.
Prints `steps N step_ms X wall_s Y` (the timed loop, one frame a step; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import numpy as np

RING = 4


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--out-size", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--resident", action="store_true")
    args = p.parse_args()
    n, m = args.size, args.out_size
    if m % 2 or not 0 < m <= n:
        p.error("--out-size must be even and at most --size")
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception as e:      # no CuPy or no GPU
        print(f"skipped: {e}", file=sys.stderr)
        return 77
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n
    scene = np.sin(40 * xx) * np.cos(25 * yy)
    frames = [(scene + rng.standard_normal((n, n), dtype=np.float32)).astype(np.float32)
              for _ in range(RING)]
    on_gpu = [cp.asarray(f) for f in frames] if args.resident else None
    hann = np.hanning(m).astype(np.float32)
    window = cp.asarray(np.outer(hann, hann))
    c, h = n // 2, m // 2
    scale = np.float32(m * m / (n * n))
    results = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
        frame = on_gpu[i % RING] if args.resident else cp.asarray(frames[i % RING])
        spec = cp.fft.fftshift(cp.fft.fft2(frame))
        low = spec[c - h:c + h, c - h:c + h] * window
        small = cp.fft.ifft2(cp.fft.ifftshift(low)).real * scale
        results.append(cp.asnumpy(small))
        if len(results) > RING:
            results.pop(0)
    cp.cuda.Device().synchronize()
    loop_s = time.perf_counter() - t0
    print(f"frames {args.warmup + args.steps} of {n} x {n} -> {m} x {m}, "
          f"last mean {float(results[-1].mean()):.4f} std {float(results[-1].std()):.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
