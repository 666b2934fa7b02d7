"""A small classifier trained in JAX the way its first draft was written, without jit: a 2-layer
MLP (128 inputs, two hidden layers of 256, 10 classes), batch 64, softmax cross-entropy and Adam
written with jax.tree_util.tree_map. The training step is plain Python over jax.numpy and
jax.grad applied as it is, so every primitive of the forward, the backward and the optimizer is
dispatched on its own. The data: 16 batches of random inputs labelled by a fixed random linear
teacher, made on the GPU before the loop and taken in turn.

    python3 jax_eager.py [--steps N] [--warmup N] [--jit]

--jit: the same training step under jax.jit (one dispatch a step), the same data. The losses
stay on the GPU until the end. Prints `steps N step_ms X wall_s Y` (the timed loop; wall_s
since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import jax
import jax.numpy as jnp

IN, WIDTH, CLASSES, BATCH, POOL = 128, 256, 10, 64, 16
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"w1": jax.random.normal(k1, (IN, WIDTH)) * (2.0 / IN) ** 0.5,
            "b1": jnp.zeros(WIDTH),
            "w2": jax.random.normal(k2, (WIDTH, WIDTH)) * (2.0 / WIDTH) ** 0.5,
            "b2": jnp.zeros(WIDTH),
            "w3": jax.random.normal(k3, (WIDTH, CLASSES)) * (1.0 / WIDTH) ** 0.5,
            "b3": jnp.zeros(CLASSES)}


def loss_fn(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    h = jax.nn.relu(h @ params["w2"] + params["b2"])
    logits = h @ params["w3"] + params["b3"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train_step(state, x, y):
    params, m, v, count = state
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    count = count + 1
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
    c1 = 1.0 / (1.0 - B1 ** count)
    c2 = 1.0 / (1.0 - B2 ** count)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - LR * (m * c1) / (jnp.sqrt(v * c2) + EPS), params, m, v)
    return (params, m, v, count), loss


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--jit", action="store_true")
    args = p.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("skipped: JAX sees no GPU", file=sys.stderr)
        return 77
    key = jax.random.PRNGKey(0)
    params = init(key)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (params, zeros, zeros, jnp.zeros((), jnp.float32))
    teacher = jax.random.normal(jax.random.PRNGKey(1), (IN, CLASSES))
    batches = []
    for k in jax.random.split(jax.random.PRNGKey(2), POOL):
        x = jax.random.normal(k, (BATCH, IN))
        batches.append((x, jnp.argmax(x @ teacher, axis=1)))
    step = jax.jit(train_step) if args.jit else train_step
    losses = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            jax.block_until_ready(state)
            t0 = time.perf_counter()
        x, y = batches[i % POOL]
        state, loss = step(state, x, y)
        losses.append(loss)
    jax.block_until_ready(state)
    loop_s = time.perf_counter() - t0
    first, last = float(losses[0]), float(losses[-1])
    print(f"loss {first:.4f} -> {last:.4f}")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
