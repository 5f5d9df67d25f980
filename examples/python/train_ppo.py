"""Trains a masked PPO agent to schedule Lublin–Feitelson jobs, on CPU.

The agent is the scheduler of ``partalloc.gym.SchedulingEnv`` on a
256-node machine (paging: any free nodes, as the learned-scheduling
benchmarks assume), rewarded by the negative mean bounded slowdown
(threshold 10 s). Training episodes are 256 consecutive jobs of a
Lublin–Feitelson trace drawn by ``partalloc.generate_lublin`` (seed 1),
each starting at an offset drawn from the episode's seed. The result table
scores the trained agent (greedy: the most probable valid action) and the
priority heuristics on 10 held-out sequences of 256 jobs cut from another
Lublin trace (seed 2), the heuristics through ``partalloc.simulate`` (the
Rust policies, whole queue), the agent through the environment on the same
files.

The PPO is written here, with NumPy only (no deep-learning library): a
small network scores each waiting job of the window from its own features
and the machine's (one set of weights shared by every slot, so the policy
does not depend on where a job sits in the window), a learned bias scores
waiting; invalid actions are masked out of the softmax. A second network
estimates the value. Clipped surrogate, entropy bonus, generalised
advantage estimation and Adam, with gradients written out by hand.

Run from the repository root after ``pip install ./crates/python``::

    python examples/python/train_ppo.py            # about 12 minutes on 2 cores
    python examples/python/train_ppo.py --smoke    # seconds: CI's check

It writes ``learning_curve.csv``, ``learning_curve.svg`` and
``results.md`` to ``--out`` (default ``ppo-out``).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

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
HEURISTICS = {
    "FCFS": "fcfs",
    "SJF": "priority[order=sjf]",
    "WFP3": "priority[order=wfp3]",
    "UNICEP": "priority[order=unicep]",
    "F1": "priority[order=f1]",
}


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


def make_env(trace: Path, episode_jobs) -> SchedulingEnv:
    return SchedulingEnv(trace, TOPOLOGY, ALLOCATOR, window=WINDOW, reward="slowdown",
                         per_step=True, episode_jobs=episode_jobs, mapping="nodes")


def rollout(env: SchedulingEnv, agent: Agent, steps: int, rng: np.random.Generator,
            seeds: np.random.Generator, lam: float = 0.97):
    obs_l, mask_l, act_l, logp_l, val_l, rew_l, done_l = [], [], [], [], [], [], []
    finished: List[float] = []
    obs, info = env.reset(seed=int(seeds.integers(2**31)))
    mask = info["action_mask"]
    while len(act_l) < steps:
        a, logp, v = agent.act(obs, mask, rng, greedy=False)
        obs_l.append(obs.copy())
        mask_l.append(mask.copy())
        act_l.append(a)
        logp_l.append(logp)
        val_l.append(v)
        obs, r, done, _, info = env.step(a)
        mask = info["action_mask"]
        rew_l.append(r)
        done_l.append(done)
        if done:
            finished.append(info["episode"]["mean_bounded_slowdown"])
            obs, info = env.reset(seed=int(seeds.integers(2**31)))
            mask = info["action_mask"]
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


def score_agent(agent: Agent, files: List[Path]) -> List[float]:
    out = []
    for f in files:
        env = make_env(f, None)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            a, _, _ = agent.act(obs, info["action_mask"], None, greedy=True)
            obs, _, done, _, info = env.step(a)
        out.append(info["episode"]["mean_bounded_slowdown"])
    return out


def score_heuristic(spec: str, files: List[Path]) -> List[float]:
    out = []
    for f in files:
        results, _ = partalloc.simulate(TOPOLOGY, ALLOCATOR, spec, trace=f, mapping="nodes",
                                        records=False)
        out.append(results["replications"][0]["mean_bounded_slowdown"])
    return out


def svg_curve(rows: List[Dict[str, float]], baselines: Dict[str, float]) -> str:
    w, h, pad = 640, 360, 50
    xs = [r["decisions"] for r in rows]
    ys = [r["heldout_bsld"] for r in rows]
    top = max(ys + list(baselines.values())) * 1.05
    xmax = max(xs) if xs else 1

    def px(x: float) -> float:
        return pad + (w - 2 * pad) * x / xmax

    def py(y: float) -> float:
        return h - pad - (h - 2 * pad) * y / top

    path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(zip(xs, ys)))
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
        f'<path d="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>',
    ]
    for i, (name, y) in enumerate(sorted(baselines.items(), key=lambda kv: kv[1])):
        parts.append(f'<line x1="{pad}" y1="{py(y):.1f}" x2="{w - pad}" y2="{py(y):.1f}" stroke="#999" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{w - pad + 4}" y="{py(y) + 4:.1f}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=12.0, help="training time budget")
    ap.add_argument("--steps", type=int, default=8192, help="decisions per update")
    ap.add_argument("--sequences", type=int, default=10, help="held-out sequences")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("ppo-out"))
    ap.add_argument("--smoke", action="store_true", help="two tiny updates, two sequences")
    args = ap.parse_args()
    if args.smoke:
        args.minutes, args.steps, args.sequences = float("inf"), 512, 2
    if not args.minutes >= 0 or args.steps <= 0 or args.sequences <= 0:
        print("error: --minutes must be at least 0, --steps and --sequences above 0", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    seeds = np.random.default_rng(args.seed + 1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train = tmp / "lublin-train.swf"
        test = tmp / "lublin-test.swf"
        write_lublin(train, 10_000, seed=1)
        write_lublin(test, 10_000, seed=2)
        files = held_out(test, tmp, args.sequences)
        heuristics = {name: score_heuristic(spec, files) for name, spec in HEURISTICS.items()}
        env = make_env(train, SEQUENCE)
        agent = Agent(rng)
        rows: List[Dict[str, float]] = []
        start = time.perf_counter()
        decisions = 0
        update = 0
        while True:
            batch, finished = rollout(env, agent, args.steps, rng, seeds)
            agent.update(batch, rng)
            decisions += len(batch["act"])
            update += 1
            elapsed = time.perf_counter() - start
            if update % 5 == 1 or args.smoke or elapsed > args.minutes * 60:
                held = float(np.mean(score_agent(agent, files)))
                rows.append({"update": update, "decisions": decisions, "seconds": round(elapsed, 1),
                             "train_bsld": float(np.mean(finished)) if finished else float("nan"),
                             "heldout_bsld": held})
                print(f"update {update:4d}  decisions {decisions:8d}  {elapsed:6.0f} s  "
                      f"train {rows[-1]['train_bsld']:10.2f}  held-out {held:10.2f}", flush=True)
            if elapsed > args.minutes * 60 or (args.smoke and update >= 2):
                break
        learned = score_agent(agent, files)
    with open(args.out / "learning_curve.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    means = {name: float(np.mean(v)) for name, v in heuristics.items()}
    (args.out / "learning_curve.svg").write_text(svg_curve(rows, means))
    table = ["| policy | mean bounded slowdown | per sequence |", "|---|---:|---|"]
    for name, v in list(heuristics.items()) + [("PPO (this run)", learned)]:
        table.append(f"| {name} | {np.mean(v):.2f} | {' '.join(f'{x:.1f}' for x in v)} |")
    text = "\n".join(table) + "\n"
    (args.out / "results.md").write_text(text)
    print(text)
    beaten = [n for n, m in means.items() if float(np.mean(learned)) < m]
    print(f"PPO beats: {', '.join(beaten) if beaten else 'none'} "
          f"({decisions} decisions in {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
