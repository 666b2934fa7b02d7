"""A jitted JAX step of one small kernel (a damped update of a 64K-element state), called once
per step from Python, as a simulation or an online update loop does.
--steps-per-call K runs K steps inside one jitted call (lax.fori_loop): the same arithmetic
with one dispatch for K steps.

    python3 jax_tiny_jit.py [--steps N] [--warmup N] [--steps-per-call K]

Prints `steps N step_ms X wall_s Y` (N steps, whatever K; the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import jax
import jax.numpy as jnp


def update(x):
    return 0.999 * x + 0.001 * jnp.tanh(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--steps-per-call", type=int, default=1)
    args = p.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("skipped: JAX sees no GPU", file=sys.stderr)
        return 77
    k = args.steps_per_call
    if k < 1 or args.steps % k or args.warmup % k:
        p.error("--steps-per-call must divide --steps and --warmup")
    step = jax.jit(update) if k == 1 else \
        jax.jit(lambda x: jax.lax.fori_loop(0, k, lambda i, v: update(v), x))
    x = jax.random.normal(jax.random.PRNGKey(0), (65536,), dtype=jnp.float32)
    for _ in range(args.warmup // k):
        x = step(x)
    x.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(args.steps // k):
        x = step(x)
    x.block_until_ready()
    loop_s = time.perf_counter() - t0
    print(f"checksum {float(jnp.sum(x)):.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
