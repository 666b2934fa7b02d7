"""A classifier trained in JAX with a dropout schedule: the dropout rate is annealed in stages,
from 0.5 down, changing every 250 steps (--every), and the jitted training step takes the rate as
a plain Python float marked static, `jax.jit(train_step, static_argnums=(3,))`, as one writes
a hyperparameter that "does not change often" (a Python branch on it would need it static
anyway). The model: an MLP (784 inputs, four hidden layers of 4096 with GELU and dropout after
each, 10 classes), batch 1024, float32 (JAX's default matmul precision), softmax
cross-entropy, Adam written with jax.tree_util.tree_map; the dropout key is split inside the
step from a key kept in the training state. The data: 16 batches of random inputs labelled by
a fixed random two-layer teacher, made on the GPU before the loop and taken in turn. At the end
of each stage the loop logs the stage's last loss (a float read from the GPU). The warm-up
steps use the first stage's rate; every later stage's rate is a new static value, so JAX traces
the step again and XLA compiles it again inside the timed loop (16 stages in the default 4000
steps: 15 recompilations). JAX's persistent compilation cache is turned off, so that every run
compiles as a first run does even where a cache folder is configured in the environment.

    python3 jax_retrace.py [--batch B] [--every K] [--steps N] [--warmup N] [--traced-arg]

--traced-arg: the same step, the same schedule and the same arithmetic, with the rate passed as
a traced float32 scalar (one device array a stage, made before the loop) instead of a static
argument: one trace and one compilation, in the warm-up. Prints `steps N step_ms X wall_s Y`
(the timed loop; wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import sys

import jax
import jax.numpy as jnp

try:        # no on-disk cache: each run compiles as the first run on a fresh machine does
    jax.config.update("jax_enable_compilation_cache", False)
except Exception:       # an option this JAX does not know: it has no cache to turn off
    pass

IN, WIDTH, DEPTH, CLASSES, POOL = 784, 4096, 4, 10, 16
LR, B1, B2, EPS = 3e-4, 0.9, 0.999, 1e-8
MAX_RATE = 0.5

TRACES = []             # appended to each time train_step is traced (Python runs only then)


def init(key):
    sizes = [IN] + [WIDTH] * DEPTH + [CLASSES]
    params = []
    for k, (a, b) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": jax.random.normal(k, (a, b)) * (2.0 / a) ** 0.5,
                       "b": jnp.zeros(b)})
    return params


def forward(params, x, key, rate):
    keep = 1.0 - rate
    keys = jax.random.split(key, len(params) - 1)
    for i, layer in enumerate(params[:-1]):
        x = jax.nn.gelu(x @ layer["w"] + layer["b"])
        mask = jax.random.bernoulli(keys[i], keep, x.shape)
        x = jnp.where(mask, x / keep, 0.0)
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y, key, rate):
    logp = jax.nn.log_softmax(forward(params, x, key, rate))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def train_step(state, x, y, rate):
    TRACES.append(isinstance(rate, float))  # True: a static Python float
    params, m, v, count, key = state
    key, sub = jax.random.split(key)
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, sub, rate)
    count = count + 1
    m = jax.tree_util.tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
    c1 = 1.0 / (1.0 - B1 ** count)
    c2 = 1.0 / (1.0 - B2 ** count)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - LR * (m * c1) / (jnp.sqrt(v * c2) + EPS), params, m, v)
    return (params, m, v, count, key), loss


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--every", type=int, default=250)
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--traced-arg", action="store_true")
    args = p.parse_args()
    if jax.devices()[0].platform != "gpu":
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    stages = -(-args.steps // args.every)
    rates = [round(MAX_RATE * (1.0 - s / stages), 5) for s in range(stages)]
    if args.traced_arg:
        step = jax.jit(train_step)
        rate_args = [jnp.asarray(r, dtype=jnp.float32) for r in rates]
    else:
        step = jax.jit(train_step, static_argnums=(3,))
        rate_args = rates

    params = init(jax.random.PRNGKey(0))
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (params, zeros, zeros, jnp.zeros((), jnp.float32), jax.random.PRNGKey(42))
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    t1 = jax.random.normal(k1, (IN, 256)) / IN ** 0.5
    t2 = jax.random.normal(k2, (256, CLASSES))
    batches = []
    for k in jax.random.split(jax.random.PRNGKey(2), POOL):
        x = jax.random.normal(k, (args.batch, IN))
        batches.append((x, jnp.argmax(jnp.tanh(x @ t1) @ t2, axis=1)))

    log = []
    t0 = None
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            jax.block_until_ready(state)
            t0 = time.perf_counter()
        s = max(i - args.warmup, 0)             # the warm-up runs the first stage's rate
        stage = s // args.every
        x, y = batches[i % POOL]
        state, loss = step(state, x, y, rate_args[stage])
        if i >= args.warmup and (s % args.every == args.every - 1 or s == args.steps - 1):
            log.append((stage, rates[stage], float(loss)))     # end of a stage: log its loss
    jax.block_until_ready(state)
    loop_s = time.perf_counter() - t0
    print(f"{stages} stages, dropout {rates[0]} -> {rates[-1]}, loss {log[0][2]:.4f} -> "
          f"{log[-1][2]:.4f}, train_step traced {len(TRACES)} times "
          f"({'traced' if args.traced_arg else 'static'} rate)")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
