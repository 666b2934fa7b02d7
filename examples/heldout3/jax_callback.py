"""A small classifier trained in JAX with the whole training step under jax.jit, its loss logged
from inside the step with `jax.debug.callback`, as the JAX documentation shows for printing or
logging values in a jitted function: the callback, a Python function, appends (step, loss) to
a list on the host every step. The model: an MLP (784 inputs, three hidden layers of 1024 with
GELU, 10 classes), batch 2048, softmax cross-entropy, Adam with weight decay written with
jax.tree_util.tree_map. The data: 16 batches of random inputs labelled by a fixed random
two-layer teacher, made on the GPU before the loop and taken in turn.

    python3 jax_callback.py [--batch B] [--steps N] [--warmup N] [--no-callback]

--no-callback: the same jitted step without the callback; it returns the loss, which stays on
the GPU (a list of arrays) and is read after the loop. Prints `steps N step_ms X wall_s Y`
(the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import functools
import sys

import jax
import jax.numpy as jnp

IN, WIDTH, DEPTH, CLASSES, POOL = 784, 1024, 3, 10, 16
LR, B1, B2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 1e-4

LOGGED = []


def log_loss(step, loss):
    """Runs on the host, called from inside the jitted step."""
    LOGGED.append((int(step), float(loss)))


def init(key):
    sizes = [IN] + [WIDTH] * DEPTH + [CLASSES]
    params = []
    for k, (a, b) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": jax.random.normal(k, (a, b)) * (2.0 / a) ** 0.5,
                       "b": jnp.zeros(b)})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = jax.nn.gelu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logp = jax.nn.log_softmax(forward(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train_step(state, x, y, callback):
    params, m, v, count = state
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    if callback:
        jax.debug.callback(log_loss, count, loss)
    count = count + 1
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
    c1 = 1.0 / (1.0 - B1 ** count)
    c2 = 1.0 / (1.0 - B2 ** count)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - LR * ((m * c1) / (jnp.sqrt(v * c2) + EPS) + WD * p), params, m, v)
    return (params, m, v, count), loss


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--no-callback", action="store_true")
    args = p.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("skipped: JAX sees no GPU", file=sys.stderr)
        return 77
    params = init(jax.random.PRNGKey(0))
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (params, zeros, zeros, jnp.zeros((), jnp.float32))
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    t1 = jax.random.normal(k1, (IN, 256)) / IN ** 0.5
    t2 = jax.random.normal(k2, (256, CLASSES))
    batches = []
    for k in jax.random.split(jax.random.PRNGKey(2), POOL):
        x = jax.random.normal(k, (args.batch, IN))
        batches.append((x, jnp.argmax(jnp.tanh(x @ t1) @ t2, axis=1)))
    step = jax.jit(functools.partial(train_step, callback=not args.no_callback))
    losses = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            jax.block_until_ready(state)
            jax.effects_barrier()
            t0 = time.perf_counter()
        x, y = batches[i % POOL]
        state, loss = step(state, x, y)
        if args.no_callback:
            losses.append(loss)
    jax.block_until_ready(state)
    jax.effects_barrier()
    loop_s = time.perf_counter() - t0
    if args.no_callback:
        values = [float(v) for v in jax.device_get(losses[args.warmup:])]
    else:
        values = [loss for s, loss in sorted(LOGGED) if s >= args.warmup]
    first, last, count = values[0], values[-1], len(values)
    print(f"loss {first:.4f} -> {last:.4f} over {count} logged steps")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
