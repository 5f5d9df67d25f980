"""The PPO training example (examples/python/train_ppo.py): its hand-written
gradients against finite differences, and a smoke run whose table scores
the same policy equally by the two paths it uses (the environment and
``partalloc.simulate``)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import partalloc

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "python" / "train_ppo.py"


@pytest.fixture(scope="module")
def ppo():
    spec = importlib.util.spec_from_file_location("train_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def minibatch(ppo, rng: np.random.Generator, b: int = 6):
    w = ppo.WINDOW
    obs = rng.uniform(0, 1, (b, w * ppo.SLOT + ppo.MACHINE)).astype(np.float32)
    mask = rng.uniform(0, 1, (b, w + 1)) < 0.5
    mask[:, w] = True
    act = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    return {
        "x": ppo.slot_features(obs),
        "mask": mask,
        "act": act,
        # Old log-probabilities near the new ones, so some ratios clip.
        "logp": np.log(np.full(b, 1.0 / w)) + rng.normal(0, 0.3, b),
        "adv": rng.normal(0, 1, b),
        "ret": rng.normal(0, 1, b),
    }


def test_loss_gradients_equal_finite_differences(ppo):
    rng = np.random.default_rng(3)
    agent = ppo.Agent(rng)
    # Larger output weights than at the start, so the policy is not uniform.
    agent.pi.params[-2] *= 100
    agent.wait[0] = 0.3
    mb = minibatch(ppo, rng)
    _, grads = agent.loss_and_grads(mb)
    params = agent.opt.params
    assert len(grads) == len(params)
    h = 1e-6
    checked = 0
    for p, g in zip(params, grads):
        flat, gflat = p.reshape(-1), g.reshape(-1)
        for i in rng.choice(flat.size, size=min(4, flat.size), replace=False):
            keep = flat[i]
            flat[i] = keep + h
            up, _ = agent.loss_and_grads(mb)
            flat[i] = keep - h
            down, _ = agent.loss_and_grads(mb)
            flat[i] = keep
            numeric = (up - down) / (2 * h)
            assert abs(numeric - gflat[i]) <= 1e-5 + 1e-4 * abs(numeric), (numeric, gflat[i])
            checked += 1
    assert checked >= 20


def test_masked_actions_are_never_chosen(ppo):
    rng = np.random.default_rng(5)
    agent = ppo.Agent(rng)
    w = ppo.WINDOW
    obs = rng.uniform(0, 1, w * ppo.SLOT + ppo.MACHINE).astype(np.float32)
    for _ in range(50):
        mask = rng.uniform(0, 1, w + 1) < 0.2
        mask[rng.integers(w + 1)] = True
        a, logp, _ = agent.act(obs, mask, rng, greedy=False)
        assert mask[a] and logp <= 0
        assert mask[agent.act(obs, mask, rng, greedy=True)[0]]


def test_smoke_run_scores_fcfs_alike_by_both_paths(ppo, tmp_path: Path):
    if not hasattr(partalloc, "generate_lublin"):
        pytest.skip("this build has no Lublin generator")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    table = (out / "results.md").read_text()
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = [float(v) for v in cells[2].split()]
    assert set(rows) == set(ppo.HEURISTICS) | {"PPO (this run)"}
    assert all(len(v) == 2 and all(np.isfinite(v)) and min(v) >= 1 for v in rows.values())
    # FCFS as an agent in the environment (start the oldest job when the
    # mask allows it, else wait) on the same held-out files: the value
    # partalloc.simulate gave the table.
    test = tmp_path / "test.swf"
    ppo.write_lublin(test, 10_000, seed=2)
    files = ppo.held_out(test, tmp_path, 2)
    env_fcfs = []
    for f in files:
        env = ppo.make_env(f, None)
        obs, info = env.reset(seed=0)
        done_ = False
        while not done_:
            action = 0 if info["action_mask"][0] else ppo.WINDOW
            obs, _, done_, _, info = env.step(action)
        env_fcfs.append(info["episode"]["mean_bounded_slowdown"])
    assert [round(v, 1) for v in env_fcfs] == rows["FCFS"]
    curve = (out / "learning_curve.csv").read_text().splitlines()
    assert curve[0].startswith("update,decisions") and len(curve) == 3
    assert re.search(r"<path d=\"M", (out / "learning_curve.svg").read_text())
