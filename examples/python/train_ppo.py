"""Trains a masked PPO agent to schedule Lublin–Feitelson jobs, on CPU.

The agent is the scheduler of ``partalloc.gym.SchedulingEnv`` on a
256-node machine (paging: any free nodes, as the learned-scheduling
benchmarks assume), rewarded by the negative mean bounded slowdown
(threshold 10 s). Training episodes are 256 consecutive jobs of a
Lublin–Feitelson trace drawn by ``partalloc.generate_lublin`` (seed 1),
each starting at an offset drawn from the episode's seed.

The agent chooses among the window jobs that can start now: the
environment's mask without its wait action whenever some window job can
start (``work_conserving``), which is the action space of a fit-aware
heuristic. With waiting allowed (``--allow-wait``) an agent learns to hold
long jobs back until the sequence's last arrival, which mean bounded
slowdown over a finite sequence does not charge for.

The result table scores, on 10 held-out sequences of 256 jobs cut from
another Lublin trace (seed 2): the queue orders FCFS, SJF, WFP3, UNICEP
and F1 as the Rust policies run them through ``partalloc.simulate``
(blocking: the best job waits until it fits; and with EASY backfilling),
the same orders fit-aware (the best window job among those that can
start now, acting in the environment as the agent does), and the trained
agent of each seed (greedy: its most probable valid action).

The PPO is written here, with NumPy only (no deep-learning library): a
small network scores each waiting job of the window from its own features
and the machine's (one set of weights shared by every slot, so the policy
does not depend on where a job sits in the window), a learned bias scores
waiting; invalid actions are masked out of the softmax. A second network
estimates the value. Clipped surrogate, entropy bonus, generalised
advantage estimation and Adam, with gradients written out by hand.

Run from the repository root after ``pip install ./crates/python``::

    python examples/python/train_ppo.py --processes 3   # 3 seeds × 20 updates
    python examples/python/train_ppo.py --smoke         # seconds: CI's check

It writes ``learning_curve.csv``, ``learning_curve.svg``, ``results.md``
and each seed's trained weights (``agent-seed<N>.npz``) to ``--out``
(default ``ppo-out``).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

import partalloc
from partalloc.gym import SchedulingEnv

NODES = 256
TOPOLOGY = "hypercube:8"
ALLOCATOR = "paging"
SEQUENCE = 256
WINDOW = 32
SLOT = 5  # present, nodes, requested time, wait, placeable
MACHINE = 4  # free, largest placeable, fragmentation, queue length
#: The queue orders of the baselines (`partalloc_schedulers::order`).
ORDERS = {"FCFS": "fcfs", "SJF": "sjf", "WFP3": "wfp3", "UNICEP": "unicep", "F1": "f1"}


# --------------------------------------------------------------------------
# Features


def slot_features(obs: np.ndarray) -> np.ndarray:
    """(B, obs) -> (B, WINDOW, SLOT + MACHINE): each slot with the machine's
    values; the time features and the queue length on a log scale."""
    b = obs.shape[0]
    slots = obs[:, : WINDOW * SLOT].reshape(b, WINDOW, SLOT).astype(np.float64)
    machine = obs[:, WINDOW * SLOT :].astype(np.float64)
    slots[:, :, 2:4] = np.log1p(slots[:, :, 2:4])
    machine[:, 3] = np.log1p(machine[:, 3])
    return np.concatenate(
        [slots, np.broadcast_to(machine[:, None, :], (b, WINDOW, MACHINE))], axis=2
    )


def value_features(x: np.ndarray) -> np.ndarray:
    """(B, WINDOW, F) slot features -> (B, 2F): the mean over present slots
    and the machine's values, the input of the value network."""
    present = x[:, :, :1]
    mean = (x * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1.0)
    return np.concatenate([mean, x[:, 0, :]], axis=1)


# --------------------------------------------------------------------------
# A small multilayer perceptron with hand-written gradients


class MLP:
    def __init__(self, sizes: List[int], rng: np.random.Generator, out_scale: float) -> None:
        self.params: List[np.ndarray] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            scale = out_scale if i == len(sizes) - 2 else np.sqrt(2.0 / a)
            self.params.append(rng.normal(0.0, scale, (a, b)))
            self.params.append(np.zeros(b))

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, List[np.ndarray]]:
        hs = [x]
        h = x
        layers = len(self.params) // 2
        for i in range(layers):
            h = h @ self.params[2 * i] + self.params[2 * i + 1]
            if i < layers - 1:
                h = np.tanh(h)
            hs.append(h)
        return h, hs

    def backward(self, hs: List[np.ndarray], dout: np.ndarray) -> List[np.ndarray]:
        grads: List[np.ndarray] = [np.zeros(0)] * len(self.params)
        layers = len(self.params) // 2
        d = dout
        for i in reversed(range(layers)):
            if i < layers - 1:
                d = d * (1.0 - hs[i + 1] ** 2)
            grads[2 * i] = hs[i].T @ d
            grads[2 * i + 1] = d.sum(axis=0)
            d = d @ self.params[2 * i].T
        return grads


class Adam:
    def __init__(self, params: List[np.ndarray], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: List[np.ndarray], max_norm: float = 0.5) -> None:
        norm = np.sqrt(sum(float((g**2).sum()) for g in grads))
        scale = min(1.0, max_norm / (norm + 1e-12))
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            g = g * scale
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mh = m / (1 - 0.9**self.t)
            vh = v / (1 - 0.999**self.t)
            p -= self.lr * mh / (np.sqrt(vh) + 1e-8)


class Agent:
    """Per-slot scores, a waiting bias, a value network."""

    def __init__(self, rng: np.random.Generator) -> None:
        f = SLOT + MACHINE
        self.pi = MLP([f, 32, 16, 1], rng, out_scale=0.01)
        self.wait = np.zeros(1)
        self.vf = MLP([2 * f, 64, 64, 1], rng, out_scale=1.0)
        self.opt = Adam(self.pi.params + [self.wait] + self.vf.params, lr=1e-3)

    def logits(self, x: np.ndarray, mask: np.ndarray):
        b = x.shape[0]
        out, hs = self.pi.forward(x.reshape(b * WINDOW, -1))
        logits = np.concatenate([out.reshape(b, WINDOW), np.repeat(self.wait[None, :], b, 0)], 1)
        logits = np.where(mask, logits, -1e9)
        return logits, hs

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator, greedy: bool):
        x = slot_features(obs[None, :])
        logits, _ = self.logits(x, mask[None, :])
        logits = logits[0]
        if greedy:
            return int(np.argmax(logits)), 0.0, 0.0
        p = np.exp(logits - logits.max())
        p /= p.sum()
        a = int(rng.choice(len(p), p=p))
        v = float(self.vf.forward(value_features(x))[0][0, 0])
        return a, float(np.log(p[a] + 1e-30)), v

    def loss_and_grads(self, mb: Dict[str, np.ndarray], clip: float = 0.2,
                       ent: float = 0.01, vf_coef: float = 0.5):
        """The PPO loss of a minibatch (clipped surrogate, minus the entropy
        bonus, plus the value loss) and its gradient for every parameter,
        in the optimiser's order."""
        x, mask, act = mb["x"], mb["mask"], mb["act"]
        adv, ret, old = mb["adv"], mb["ret"], mb["logp"]
        b = len(act)
        logits, hs = self.logits(x, mask)
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        logp_all = np.where(mask, z - np.log(np.exp(z).sum(axis=1, keepdims=True)), 0.0)
        logp = logp_all[np.arange(b), act]
        ratio = np.exp(logp - old)
        surrogate = np.minimum(ratio * adv, np.clip(ratio, 1 - clip, 1 + clip) * adv)
        entropy = -(p * logp_all).sum(axis=1)
        v, vhs = self.vf.forward(value_features(x))
        loss = (-surrogate.mean() - ent * entropy.mean()
                + 0.5 * vf_coef * ((v[:, 0] - ret) ** 2).mean())
        # The clipped surrogate passes a gradient unless the clip holds.
        live = ~(((adv > 0) & (ratio > 1 + clip)) | ((adv < 0) & (ratio < 1 - clip)))
        dlogp = np.where(live, -adv * ratio, 0.0) / b
        onehot = np.zeros_like(p)
        onehot[np.arange(b), act] = 1.0
        dlogits = dlogp[:, None] * (onehot - p)
        dlogits += ent / b * p * (logp_all + entropy[:, None])
        dlogits = np.where(mask, dlogits, 0.0)
        gpi = self.pi.backward(hs, dlogits[:, :WINDOW].reshape(b * WINDOW, 1))
        gwait = np.array([dlogits[:, WINDOW].sum()])
        dv = vf_coef * (v[:, 0] - ret) / b
        gvf = self.vf.backward(vhs, dv[:, None])
        return float(loss), gpi + [gwait] + gvf

    def update(self, batch: Dict[str, np.ndarray], rng: np.random.Generator,
               epochs: int = 4, minibatch: int = 512) -> None:
        n = len(batch["act"])
        for _ in range(epochs):
            order = rng.permutation(n)
            for s in range(0, n, minibatch):
                idx = order[s : s + minibatch]
                _, grads = self.loss_and_grads({k: v[idx] for k, v in batch.items()})
                self.opt.step(grads)


# --------------------------------------------------------------------------
# Traces, rollouts, evaluation


def write_lublin(path: Path, jobs: int, seed: int) -> None:
    table = partalloc.generate_lublin(NODES, jobs, seed=seed, as_frame=False)
    header = [f"MaxNodes: {NODES}", f"MaxProcs: {NODES}"]
    partalloc.write_swf(path, table, header)


def held_out(path: Path, dest: Path, count: int, seed: int = 2026) -> List[Path]:
    """`count` sequences of SEQUENCE consecutive jobs at offsets drawn from
    `seed` (as RLScheduler samples its test sequences), one file each."""
    table = partalloc.read_swf(path, as_frame=False)
    offsets = np.random.default_rng(seed).choice(len(table) - SEQUENCE, size=count, replace=False)
    files = []
    for k, at in enumerate(sorted(int(o) for o in offsets)):
        f = dest / f"heldout-{k}.swf"
        partalloc.write_swf(f, table[at : at + SEQUENCE], [f"MaxNodes: {NODES}", f"MaxProcs: {NODES}"])
        files.append(f)
    return files


def make_env(trace: Path, episode_jobs, window: int = WINDOW, backfill: str = "none") -> SchedulingEnv:
    return SchedulingEnv(trace, TOPOLOGY, ALLOCATOR, window=window, reward="slowdown",
                         per_step=True, episode_jobs=episode_jobs, mapping="nodes",
                         backfill=backfill)


def work_conserving(mask: np.ndarray) -> np.ndarray:
    """The action mask without waiting while some window job can start:
    the choices of a heuristic that may pass over a job that does not fit
    but never leaves one that fits waiting on purpose."""
    if mask[:-1].any():
        mask = mask.copy()
        mask[-1] = False
    return mask


def rollout(env: SchedulingEnv, agent: Agent, steps: int, rng: np.random.Generator,
            seeds: np.random.Generator, allow_wait: bool = False, lam: float = 0.97):
    obs_l, mask_l, act_l, logp_l, val_l, rew_l, done_l = [], [], [], [], [], [], []
    finished: List[float] = []
    restrict = (lambda m: m) if allow_wait else work_conserving
    obs, info = env.reset(seed=int(seeds.integers(2**31)))
    mask = restrict(info["action_mask"])
    while len(act_l) < steps:
        a, logp, v = agent.act(obs, mask, rng, greedy=False)
        obs_l.append(obs.copy())
        mask_l.append(mask.copy())
        act_l.append(a)
        logp_l.append(logp)
        val_l.append(v)
        obs, r, done, _, info = env.step(a)
        mask = restrict(info["action_mask"])
        rew_l.append(r)
        done_l.append(done)
        if done:
            finished.append(info["episode"]["mean_bounded_slowdown"])
            obs, info = env.reset(seed=int(seeds.integers(2**31)))
            mask = restrict(info["action_mask"])
    rew = np.array(rew_l)
    scale = max(np.std(rew), 1e-8)
    rew = rew / scale
    val = np.array(val_l)
    done = np.array(done_l)
    adv = np.zeros_like(rew)
    last = 0.0
    # The last step's successor is an unfinished episode: bootstrap with 0
    # after a finished one, with its value estimate otherwise.
    next_value = 0.0 if done[-1] else val[-1]
    for t in reversed(range(len(rew))):
        nv = 0.0 if done[t] else (val[t + 1] if t + 1 < len(rew) else next_value)
        delta = rew[t] + nv - val[t]
        last = delta + (0.0 if done[t] else lam * last)
        adv[t] = last
    ret = adv + val
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    x = slot_features(np.array(obs_l))
    batch = {"x": x, "mask": np.array(mask_l), "act": np.array(act_l),
             "logp": np.array(logp_l), "adv": adv, "ret": ret}
    return batch, finished


# A policy acting in the environment: (obs, mask, env) -> action.
Policy = Callable[[np.ndarray, np.ndarray, SchedulingEnv], int]


def makespan(arrival: np.ndarray, end: np.ndarray) -> float:
    """From the sequence's first arrival to its last job's end, in hours."""
    return float(end.max() - arrival.min()) / 3600


def score_policy(policy: Policy, files: List[Path], allow_wait: bool = False,
                 window: int = WINDOW, backfill: str = "none",
                 spans: Optional[List[float]] = None) -> List[float]:
    """The mean bounded slowdown of `policy` on each file, acting in the
    environment (and each file's makespan appended to `spans`). Unless
    `allow_wait`, the policy is given the work-conserving mask, and an
    action outside it (waiting while a window job can start) becomes the
    first job that can start: no policy is scored on holding jobs back."""
    out = []
    for f in files:
        env = make_env(f, None, window=window, backfill=backfill)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            mask = info["action_mask"] if allow_wait else work_conserving(info["action_mask"])
            a = policy(obs, mask, env)
            if not mask[a]:
                a = int(np.flatnonzero(mask)[0])
            obs, _, done, _, info = env.step(a)
        out.append(info["episode"]["mean_bounded_slowdown"])
        if spans is not None:
            jobs = env.completed_jobs()
            spans.append(makespan(jobs["arrival"], jobs["end"]))
    return out


def greedy(agent: Agent) -> Policy:
    """The trained agent's most probable valid action."""
    return lambda obs, mask, env: agent.act(obs, mask, None, greedy=True)[0]


def score_agent(agent: Agent, files: List[Path], allow_wait: bool = False,
                spans: Optional[List[float]] = None) -> List[float]:
    return score_policy(greedy(agent), files, allow_wait, spans=spans)


def order_score(order: str, job: Dict, now: float) -> float:
    """The score of `job` in a queue order, lowest first, as the Rust
    policies compute it (`partalloc_schedulers::order::Order::score`, user
    estimates): fcfs, sjf, wfp3, unicep or f1."""
    n = float(job["nodes"])
    r = job["estimate"] if job["estimate"] is not None else job["service"]
    s = job["arrival"]
    if order == "fcfs":
        return s
    if order == "sjf":
        return r
    if order == "wfp3":
        w = now - s
        ratio = w / r if r > 0 else (0.0 if w == 0 else np.sign(w) * np.inf)
        return 0.0 if n == 0 else -(ratio**3) * n
    if order == "unicep":
        w = now - s
        d = np.log2(n) * r if n > 1 else 0.0
        return -w / d if d > 0 else (-np.inf if w > 0 else 0.0)
    if order == "f1":
        lr = np.log10(r) if r > 0 else -1.0
        ls = np.log10(s) if s > 0 else -1.0
        return (0.0 if n == 0 else lr * n) + 870.0 * ls
    raise ValueError(f"unknown order {order!r}")


def heuristic(order: str, fit_aware: bool = True) -> Policy:
    """A queue order as a policy in the environment. Fit-aware: the best
    window job among those that can start now (the agent's choices).
    Otherwise the best window job, waiting when it cannot start: the Rust
    `priority[order=…]` policy when the queue fits in the window."""

    def act(obs: np.ndarray, mask: np.ndarray, env: SchedulingEnv) -> int:
        now = env.stats()["time"]
        jobs = env.waiting_jobs()[: env.window]
        slots = [i for i in range(len(jobs)) if mask[i] or not fit_aware]
        if not slots:
            return env.wait_action
        best = min(slots, key=lambda i: (order_score(order, jobs[i], now), jobs[i]["arrival"], jobs[i]["id"]))
        return best if mask[best] else env.wait_action

    return act


def score_simulated(spec: str, files: List[Path], spans: Optional[List[float]] = None) -> List[float]:
    """A Rust policy run by partalloc.simulate on each file (whole queue)."""
    out = []
    for f in files:
        results, jobs = partalloc.simulate(TOPOLOGY, ALLOCATOR, spec, trace=f, mapping="nodes",
                                           records=spans is not None, as_frame=False)
        out.append(results["replications"][0]["mean_bounded_slowdown"])
        if spans is not None:
            spans.append(makespan(jobs["arrival"], jobs["end"]))
    return out


# A row of the table: name, what the policy may do, per-sequence mean
# bounded slowdown, per-sequence makespan (hours).
Row = Tuple[str, str, List[float], List[float]]


def baselines(files: List[Path]) -> List[Row]:
    """Every baseline's row."""
    rows: List[Row] = []
    for name, order in ORDERS.items():
        spans: List[float] = []
        rows.append((name, "blocking", score_simulated(f"priority[order={order}]", files, spans), spans))
    for name, order in ORDERS.items():
        spans = []
        rows.append((f"{name} + EASY", "EASY",
                     score_simulated(f"easy-backfilling[order={order}]", files, spans), spans))
    for name, order in ORDERS.items():
        spans = []
        label = "first fit" if order == "fcfs" else f"{name}, fit-aware"
        rows.append((label, "fit-aware", score_policy(heuristic(order), files, spans=spans), spans))
    return rows


def train(seed: int, updates: int, steps: int, minutes: Optional[float], allow_wait: bool,
          train_file: Path, files: List[Path], log: bool = True):
    """Trains one agent from `seed`; returns (agent, curve rows, decisions,
    seconds). The curve scores the held-out sequences after every fifth
    update and the last."""
    rng = np.random.default_rng(seed)
    seeds = np.random.default_rng(seed + 1)
    env = make_env(train_file, SEQUENCE)
    agent = Agent(rng)
    rows: List[Dict[str, float]] = []
    start = time.perf_counter()
    decisions = 0
    for update in range(1, updates + 1):
        batch, finished = rollout(env, agent, steps, rng, seeds, allow_wait)
        agent.update(batch, rng)
        decisions += len(batch["act"])
        elapsed = time.perf_counter() - start
        last = update == updates or (minutes is not None and elapsed > minutes * 60)
        if update % 5 == 1 or last:
            held = float(np.mean(score_agent(agent, files, allow_wait)))
            rows.append({"seed": seed, "update": update, "decisions": decisions,
                         "train_bsld": float(np.mean(finished)) if finished else float("nan"),
                         "heldout_bsld": held})
            if log:
                print(f"seed {seed}  update {update:4d}  decisions {decisions:8d}  {elapsed:6.0f} s  "
                      f"train {rows[-1]['train_bsld']:10.2f}  held-out {held:10.2f}", flush=True)
        if last:
            break
    return agent, rows, decisions, time.perf_counter() - start


def load_agent(path: Path) -> Agent:
    """An agent with the weights `np.savez` wrote (``agent-seed<N>.npz``)."""
    agent = Agent(np.random.default_rng(0))
    saved = np.load(path)
    for i, p in enumerate(agent.opt.params):
        p[...] = saved[f"arr_{i}"]
    return agent


def _train_job(args):
    seed, updates, steps, minutes, allow_wait, train_file, files, out, load = args
    if load is not None:
        agent, rows, decisions, seconds = load_agent(load / f"agent-seed{seed}.npz"), [], 0, 0.0
    else:
        agent, rows, decisions, seconds = train(seed, updates, steps, minutes, allow_wait, train_file, files)
        np.savez(out / f"agent-seed{seed}.npz", *agent.opt.params)
    spans: List[float] = []
    return seed, score_agent(agent, files, allow_wait, spans), rows, decisions, seconds, spans


def svg_curve(rows: List[Dict[str, float]], baselines: Dict[str, float]) -> str:
    w, h, pad = 640, 360, 50
    seeds = sorted({int(r["seed"]) for r in rows})
    ys = [r["heldout_bsld"] for r in rows]
    top = max(ys + list(baselines.values())) * 1.05
    xmax = max(r["decisions"] for r in rows) if rows else 1

    def px(x: float) -> float:
        return pad + (w - 2 * pad) * x / xmax

    def py(y: float) -> float:
        return h - pad - (h - 2 * pad) * y / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
        f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">training decisions</text>',
        f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">held-out mean bounded slowdown</text>',
        f'<text x="{pad}" y="{h - pad + 16}" text-anchor="middle">0</text>',
        f'<text x="{w - pad}" y="{h - pad + 16}" text-anchor="middle">{xmax:,}</text>',
        f'<text x="{pad - 6}" y="{py(top / 1.05):.1f}" text-anchor="end">{top / 1.05:.0f}</text>',
    ]
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    for k, seed in enumerate(seeds):
        pts = [(r["decisions"], r["heldout_bsld"]) for r in rows if int(r["seed"]) == seed]
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(pts))
        color = colors[k % len(colors)]
        parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{pad + 8}" y="{pad + 14 * (k + 1)}" fill="{color}">PPO seed {seed}</text>')
    for name, y in sorted(baselines.items(), key=lambda kv: kv[1]):
        parts.append(f'<line x1="{pad}" y1="{py(y):.1f}" x2="{w - pad}" y2="{py(y):.1f}" stroke="#999" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{w - pad + 4}" y="{py(y) + 4:.1f}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--updates", type=int, default=20, help="PPO updates per seed")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop a seed's training after this many minutes (the run then depends on the machine's speed)")
    ap.add_argument("--steps", type=int, default=8192, help="decisions per update")
    ap.add_argument("--sequences", type=int, default=10, help="held-out sequences")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="training seeds")
    ap.add_argument("--processes", type=int, default=1, help="seeds trained at once")
    ap.add_argument("--allow-wait", action="store_true",
                    help="let the agent wait while a job can start (and be scored so)")
    ap.add_argument("--load", type=Path, default=None,
                    help="score the agents saved in this directory (agent-seed<N>.npz) instead of training")
    ap.add_argument("--out", type=Path, default=Path("ppo-out"))
    ap.add_argument("--smoke", action="store_true", help="two tiny updates, one seed, two sequences")
    args = ap.parse_args()
    if args.smoke:
        args.updates, args.steps, args.sequences, args.seeds = 2, 512, 2, args.seeds[:1]
    if (args.updates <= 0 or args.steps <= 0 or args.sequences <= 0 or args.processes <= 0
            or (args.minutes is not None and not args.minutes >= 0)):
        print("error: --updates, --steps, --sequences and --processes must be above 0, --minutes at least 0",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train_file = tmp / "lublin-train.swf"
        test = tmp / "lublin-test.swf"
        write_lublin(train_file, 10_000, seed=1)
        write_lublin(test, 10_000, seed=2)
        files = held_out(test, tmp, args.sequences)
        base = baselines(files)
        jobs = [(s, args.updates, args.steps, args.minutes, args.allow_wait, train_file, files, args.out,
                 args.load) for s in args.seeds]
        if args.processes > 1 and len(jobs) > 1:
            import multiprocessing

            with multiprocessing.get_context("spawn").Pool(min(args.processes, len(jobs))) as pool:
                runs = pool.map(_train_job, jobs)
        else:
            runs = [_train_job(j) for j in jobs]
    rows = [r for run in runs for r in run[2]]
    means = {name: float(np.mean(v)) for name, _, v, _ in base}
    if rows:
        with open(args.out / "learning_curve.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        shown = {n: means[n] for n in ("FCFS", "SJF, fit-aware", "F1, fit-aware", "F1 + EASY")}
        (args.out / "learning_curve.svg").write_text(svg_curve(rows, shown))
    table = ["| policy | may | mean bounded slowdown | makespan (h) | per sequence |",
             "|---|---|---:|---:|---|"]
    kind = "wait" if args.allow_wait else "fit-aware"
    ppo_rows = [(f"PPO seed {seed}", kind, v, spans) for seed, v, _, _, _, spans in runs]
    for name, may, v, spans in base + ppo_rows:
        table.append(f"| {name} | {may} | {np.mean(v):.2f} | {np.mean(spans):.1f} | "
                     f"{' '.join(f'{x:.1f}' for x in v)} |")
    ppo = [float(np.mean(v)) for _, v, _, _, _, _ in runs]
    if len(ppo) > 1:
        table.append(f"| PPO, {len(ppo)} seeds | {kind} | {np.mean(ppo):.2f} "
                     f"(min {min(ppo):.2f}, max {max(ppo):.2f}) | | |")
    text = "\n".join(table) + "\n"
    (args.out / "results.md").write_text(text)
    print(text)
    # Against each baseline: ahead when every seed scores below it, behind
    # when none does, level otherwise.
    ahead = [n for n, m in means.items() if max(ppo) < m]
    behind = [n for n, m in means.items() if min(ppo) >= m]
    level = [n for n in means if n not in ahead and n not in behind]
    for what, names in (("ahead of", ahead), ("level with", level), ("behind", behind)):
        print(f"PPO ({len(ppo)} seed{'s' if len(ppo) > 1 else ''}) {what}: {'; '.join(names) if names else 'none'}")
    decisions = sum(run[3] for run in runs)
    print(f"{decisions} training decisions, {time.perf_counter() - start:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
