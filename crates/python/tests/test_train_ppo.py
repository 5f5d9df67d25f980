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


@pytest.fixture(scope="module")
def files(ppo, tmp_path_factory):
    """Three held-out sequences of the script's test trace."""
    if not hasattr(partalloc, "generate_lublin"):
        pytest.skip("this build has no Lublin generator")
    tmp = tmp_path_factory.mktemp("heldout")
    test = tmp / "test.swf"
    ppo.write_lublin(test, 10_000, seed=2)
    return ppo.held_out(test, tmp, 3)


def test_no_policy_is_scored_on_holding_jobs_back(ppo, files):
    # An agent that waits whenever waiting is valid and otherwise scores
    # every job alike: with waiting allowed it holds jobs back (the wait
    # action runs the clock to the next event), which mean bounded slowdown
    # over a finite sequence can reward by pushing long jobs past the last
    # arrival. The evaluation gives every policy the work-conserving mask,
    # so this agent takes the first job that fits: first fit.
    agent = ppo.Agent(np.random.default_rng(0))
    agent.pi.params[-2][:] = 0.0
    agent.pi.params[-1][:] = 0.0
    agent.wait[0] = 1e6
    first_fit = ppo.score_policy(ppo.heuristic("fcfs"), files)
    assert ppo.score_agent(agent, files) == first_fit
    assert ppo.score_policy(lambda obs, mask, env: env.wait_action, files) == first_fit
    # Allowed to wait, it does, and the schedule is another one.
    assert ppo.score_agent(agent, files, allow_wait=True) != first_fit
    mask = np.array([False, True] + [False] * (ppo.WINDOW - 2) + [True])
    assert not ppo.work_conserving(mask)[ppo.WINDOW]
    only_wait = np.array([False] * ppo.WINDOW + [True])
    assert ppo.work_conserving(only_wait)[ppo.WINDOW]


def starts_in_env(ppo, policy, trace, window):
    """{job id: start time} of `policy` acting in the environment (waiting allowed)."""
    env = ppo.make_env(trace, None, window=window)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(policy(obs, info["action_mask"], env))
    jobs = env.completed_jobs()
    return dict(zip(jobs["id"].tolist(), jobs["start"].tolist()))


@pytest.mark.parametrize("order", ["fcfs", "sjf", "wfp3", "unicep", "f1"])
def test_the_orders_rank_as_the_rust_policies(ppo, files, order):
    # Not fit-aware, with a window as long as the sequence: the queue order
    # as an agent waits when its best job cannot start, which is the Rust
    # priority policy, so the two start every job at the same time when the
    # orders rank alike.
    for f in files:
        blocking = starts_in_env(ppo, ppo.heuristic(order, fit_aware=False), f, ppo.SEQUENCE)
        _, records = partalloc.simulate(ppo.TOPOLOGY, ppo.ALLOCATOR, f"priority[order={order}]", trace=f,
                                        mapping="nodes", as_frame=False)
        assert blocking == dict(zip(records["id"].tolist(), records["start"].tolist()))
    # Fit-aware, it passes over jobs that do not fit: another schedule.
    fit_aware = ppo.score_policy(ppo.heuristic(order), files, window=ppo.SEQUENCE)
    blocking = ppo.score_policy(ppo.heuristic(order, fit_aware=False), files, allow_wait=True,
                                window=ppo.SEQUENCE)
    assert fit_aware != blocking


def test_smoke_run_scores_fcfs_alike_by_both_paths(ppo, files, tmp_path: Path):
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
        rows[cells[0]] = [float(v) for v in cells[4].split()]
    names = set(ppo.ORDERS) | {f"{n} + EASY" for n in ppo.ORDERS}
    names |= {"first fit"} | {f"{n}, fit-aware" for n in ppo.ORDERS if n != "FCFS"}
    assert set(rows) == names | {"PPO seed 1"}
    assert all(len(v) == 2 and all(np.isfinite(v)) and min(v) >= 1 for v in rows.values())
    # FCFS as an agent in the environment (start the oldest job when the
    # mask allows it, else wait) on the same held-out files: the value
    # partalloc.simulate gave the table.
    test = tmp_path / "test.swf"
    ppo.write_lublin(test, 10_000, seed=2)
    smoke_files = ppo.held_out(test, tmp_path, 2)
    env_fcfs = ppo.score_policy(ppo.heuristic("fcfs", fit_aware=False), smoke_files, allow_wait=True)
    assert [round(v, 1) for v in env_fcfs] == rows["FCFS"]
    assert "PPO (1 seed) ahead of:" in done.stdout and "PPO (1 seed) behind:" in done.stdout
    curve = (out / "learning_curve.csv").read_text().splitlines()
    assert curve[0].startswith("seed,update,decisions") and len(curve) == 3
    assert re.search(r"<path d=\"M", (out / "learning_curve.svg").read_text())
    assert (out / "agent-seed1.npz").is_file()
    # The saved agent, scored again without training: the same row.
    again = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--load", str(out), "--out", str(tmp_path / "again")],
        capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "results.md").read_text() == table
