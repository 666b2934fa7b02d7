"""Rollout collection for an on-policy agent (PPO style; the update is left out): 512 copies of
a toy 2-D "worm" (32 point masses on springs, pushed by a force on each mass, with gravity,
drag and ground contact) are stepped together in NumPy on the host, 8 semi-implicit Euler
substeps a control step, each one reset after 200 steps. Every step the observations go to
the GPU (torch.from_numpy(obs).cuda()), a small MLP policy with a value head samples Gaussian
actions there under inference mode, and the actions come back with .cpu() to step the
environments. Observations, actions, log-probabilities and values go into a rollout buffer on
the GPU; rewards and episode ends stay in NumPy.

    python3 rl_rollout.py [--envs E] [--steps N] [--warmup N] [--fake-env]

--fake-env: no environment: every step reuses one observation made before the loop and already
on the GPU; the same policy forward, sampling, rollout buffer writes and .cpu() read-back of
the actions. Prints `steps N step_ms X wall_s Y` (the timed loop, one control step a step;
wall_s since start)."""
import time
T_START = time.perf_counter()
import argparse
import math
import sys

import numpy as np
import torch

MASSES, SUBSTEPS, DT, EPISODE, HORIZON = 32, 8, 0.01, 200, 64
REST, STIFF, DAMP, DRAG, GRAVITY, PUSH = 0.1, 400.0, 4.0, 0.1, 9.81, 20.0


class WormEnv:
    """E worms in the plane, stepped together: positions and velocities (E, MASSES, 2)."""

    def __init__(self, n, seed):
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.p = np.zeros((n, MASSES, 2), np.float32)
        self.v = np.zeros_like(self.p)
        self.t = np.zeros(n, np.int64)
        self.reset(np.ones(n, bool))
        self.t[:] = self.rng.integers(0, EPISODE, n)    # staggered episodes

    def reset(self, which):
        k = int(which.sum())
        base = np.stack([np.arange(MASSES) * REST, np.full(MASSES, 0.3)], -1)
        self.p[which] = base + self.rng.normal(0, 0.01, (k, MASSES, 2))
        self.v[which] = 0.0
        self.t[which] = 0

    def observe(self):
        centre = self.p.mean(1, keepdims=True)
        return np.concatenate([(self.p - centre).reshape(self.n, -1),
                               self.v.reshape(self.n, -1)], 1).astype(np.float32)

    def step(self, action):
        x0 = self.p[..., 0].mean(1)
        push = PUSH * action.reshape(self.n, MASSES, 2)
        p, v = self.p, self.v
        for _ in range(SUBSTEPS):
            d = p[:, 1:] - p[:, :-1]
            length = np.sqrt((d * d).sum(-1, keepdims=True)) + 1e-6
            rel = v[:, 1:] - v[:, :-1]
            along = STIFF * (length - REST) + DAMP * (rel * d).sum(-1, keepdims=True) / length
            f = along * d / length
            force = push.copy()
            force[:, :-1] += f
            force[:, 1:] -= f
            force[..., 1] -= GRAVITY
            v += DT * force
            v *= 1.0 - DRAG * DT
            p += DT * v
            ground = p[..., 1] < 0.0
            v[..., 0] = np.where(ground, 0.5 * v[..., 0], v[..., 0])     # friction
            v[..., 1] = np.where(ground, np.abs(v[..., 1]) * 0.2, v[..., 1])
            p[..., 1] = np.maximum(p[..., 1], 0.0)
        reward = (p[..., 0].mean(1) - x0) / (SUBSTEPS * DT) - 0.01 * (action ** 2).sum(1)
        self.t += 1
        done = (self.t >= EPISODE) | ~np.isfinite(p).all((1, 2))
        if done.any():
            self.reset(done)
        return self.observe(), reward.astype(np.float32), done


class Policy(torch.nn.Module):
    def __init__(self, obs_dim, act_dim, width=256):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(obs_dim, width), torch.nn.Tanh(),
                                        torch.nn.Linear(width, width), torch.nn.Tanh())
        self.mu = torch.nn.Linear(width, act_dim)
        self.value = torch.nn.Linear(width, 1)
        self.log_std = torch.nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs):
        h = self.body(obs)
        return self.mu(h), self.log_std.expand(obs.shape[0], -1), self.value(h).squeeze(-1)


def act(policy, obs):
    mu, log_std, value = policy(obs)
    a = mu + log_std.exp() * torch.randn_like(mu)
    logp = (-0.5 * ((a - mu) / log_std.exp()) ** 2 - log_std
            - 0.5 * math.log(2 * math.pi)).sum(-1)
    return a.clamp(-1.0, 1.0), logp, value


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, default=512)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--fake-env", action="store_true")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    env = WormEnv(args.envs, seed=0)
    obs_np = env.observe()
    obs_dim, act_dim = obs_np.shape[1], 2 * MASSES
    policy = Policy(obs_dim, act_dim).cuda().eval()
    buf_obs = torch.zeros(HORIZON, args.envs, obs_dim, device="cuda")
    buf_act = torch.zeros(HORIZON, args.envs, act_dim, device="cuda")
    buf_logp = torch.zeros(HORIZON, args.envs, device="cuda")
    buf_value = torch.zeros(HORIZON, args.envs, device="cuda")
    rewards = np.zeros((HORIZON, args.envs), np.float32)
    dones = np.zeros((HORIZON, args.envs), bool)
    fixed_obs = torch.from_numpy(obs_np).cuda() if args.fake_env else None
    returns = []
    t0 = None
    with torch.inference_mode():
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            k = i % HORIZON
            obs = fixed_obs if args.fake_env else torch.from_numpy(obs_np).cuda()
            a, logp, value = act(policy, obs)
            buf_obs[k], buf_act[k], buf_logp[k], buf_value[k] = obs, a, logp, value
            a_np = a.cpu().numpy()
            if not args.fake_env:
                obs_np, rewards[k], dones[k] = env.step(a_np)
            if k == HORIZON - 1:
                returns.append(float(rewards.sum(0).mean()))
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    print(f"envs {args.envs}, mean return over {HORIZON} steps "
          f"{np.mean(returns) if returns else float('nan'):.3f}, "
          f"episodes ended {int(dones.sum())} in the last {HORIZON} steps")
    print(f"steps {args.steps} step_ms {loop_s * 1e3 / args.steps:.4f} "
          f"wall_s {time.perf_counter() - T_START:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
