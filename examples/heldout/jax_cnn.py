"""A small convolutional network (four 3x3 convolutions of 256 channels on 64 x 64 images, batch
128, bf16) trained with momentum SGD in JAX, the whole step jitted. --steps-per-call K runs K
steps in one jitted call (lax.fori_loop): the same arithmetic with one dispatch for K steps.

    python3 jax_cnn.py [--steps N] [--warmup N] [--steps-per-call K]

Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import jax
import jax.numpy as jnp

CH, SIZE, BATCH, LAYERS, CLASSES = 256, 64, 128, 4, 10


def init(key):
    keys = jax.random.split(key, LAYERS + 2)
    convs = [jax.random.normal(keys[0], (3, 3, 3, CH), jnp.bfloat16) * 0.1]
    convs += [jax.random.normal(k, (3, 3, CH, CH), jnp.bfloat16) * (2.0 / (9 * CH)) ** 0.5
              for k in keys[1:LAYERS]]
    head = jax.random.normal(keys[-1], (CH, CLASSES), jnp.bfloat16) * 0.01
    return {"convs": convs, "head": head}


def forward(params, x):
    h = x
    for w in params["convs"]:
        h = jax.lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(h)
    return jnp.mean(h, axis=(1, 2)) @ params["head"]


def loss_fn(params, x, y):
    logits = forward(params, x).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def sgd(state, x, y):
    params, mom = state
    g = jax.grad(loss_fn)(params, x, y)
    mom = jax.tree_util.tree_map(lambda m, d: (0.9 * m + d).astype(m.dtype), mom, g)
    params = jax.tree_util.tree_map(lambda p, m: (p - 0.01 * m).astype(p.dtype), params, mom)
    return params, mom


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps-per-call", type=int, default=1)
    args = p.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("skipped: JAX sees no GPU", file=sys.stderr)
        return 77
    k = args.steps_per_call
    if k < 1 or args.steps % k or args.warmup % k:
        p.error("--steps-per-call must divide --steps and --warmup")
    params = init(jax.random.PRNGKey(0))
    state = (params, jax.tree_util.tree_map(jnp.zeros_like, params))
    x = jax.random.normal(jax.random.PRNGKey(1), (BATCH, SIZE, SIZE, 3), jnp.bfloat16)
    y = jax.random.randint(jax.random.PRNGKey(2), (BATCH,), 0, CLASSES)

    @jax.jit
    def call(state):
        return jax.lax.fori_loop(0, k, lambda _, s: sgd(s, x, y), state)

    t0 = None
    for i in range(0, args.warmup + args.steps, k):
        if i == args.warmup:
            jax.block_until_ready(state)
            t0 = time.perf_counter()
        state = call(state)
    jax.block_until_ready(state)
    loop_s = time.perf_counter() - t0
    print(f"loss {float(loss_fn(state[0], x, y)):.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
