"""A JAX MLP regression trained with plain SGD (bf16 weights, width 4096 by default, batch
4096): --mode jit jits the whole training step (the usual way), --mode eager runs the same
step op by op (jax.disable_jit(): every jnp op and the gradient's pieces dispatched one by
one from Python). --steps-per-call K (jit only) runs K steps in one jitted call
(lax.fori_loop): the same arithmetic with one dispatch for K steps.

    python3 jax_mlp.py [--mode jit|eager] [--width W] [--batch B] [--steps N] [--warmup N]
                       [--steps-per-call K]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import contextlib
import sys

import jax
import jax.numpy as jnp

DEPTH = 4


def init(key, width):
    keys = jax.random.split(key, DEPTH + 1)
    ws = [jax.random.normal(k, (width, width), jnp.bfloat16) * (1.0 / width ** 0.5)
          for k in keys[:DEPTH]]
    return ws + [jax.random.normal(keys[-1], (width, 1), jnp.bfloat16) * 0.01]


def loss_fn(params, x, y):
    h = x
    for w in params[:-1]:
        h = jax.nn.gelu(h @ w)
    return jnp.mean(((h @ params[-1]).astype(jnp.float32) - y) ** 2)


def sgd_step(params, x, y):
    grads = jax.grad(loss_fn)(params, x, y)
    return [w - (1e-3 * g).astype(w.dtype) for w, g in zip(params, grads)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["jit", "eager"], default="jit")
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps-per-call", type=int, default=1)
    args = p.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("skipped: JAX sees no GPU", file=sys.stderr)
        return 77
    k = args.steps_per_call
    if k < 1 or args.steps % k or args.warmup % k or (k > 1 and args.mode == "eager"):
        p.error("--steps-per-call must divide --steps and --warmup (and needs --mode jit)")
    key = jax.random.PRNGKey(0)
    params = init(key, args.width)
    x = jax.random.normal(jax.random.PRNGKey(1), (args.batch, args.width), jnp.bfloat16)
    y = jnp.sin(jnp.mean(x.astype(jnp.float32), axis=1, keepdims=True))
    if args.mode == "eager":
        step, ctx = sgd_step, jax.disable_jit()
    else:
        ctx = contextlib.nullcontext()
        step = jax.jit(sgd_step) if k == 1 else jax.jit(
            lambda ps, x, y: jax.lax.fori_loop(0, k, lambda i, q: sgd_step(q, x, y), ps))
    with ctx:
        for _ in range(args.warmup // k):
            params = step(params, x, y)
        jax.block_until_ready(params)
        t0 = time.perf_counter()
        for _ in range(args.steps // k):
            params = step(params, x, y)
        jax.block_until_ready(params)
    loop_s = time.perf_counter() - t0
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
