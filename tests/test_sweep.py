"""The sweep (``lsa_lib.sweep``): its distribution, its records, its cluster, and the rules on it.

Every rule about deep lightning and softmax networks must agree with every certified case of the
committed sweep (``site_data/sweep``, recomputed with today's rules) and with a fresh sweep run
here on a real two-worker Dask cluster, its seed drawn anew on every run and printed, so that
each run of the tests explores cases no run has seen. A sweep whose worker is killed finishes
without losing a shard, and a sweep whose shards are partly on disk resumes and gives the same
records.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lsa_lib.rules import RULES
from lsa_lib.sweep import (
    KINDS,
    Limits,
    SweepOptions,
    certify_architecture,
    draw_architectures,
    read_sweep,
    rule_checks,
    run_sweep,
)
from lsa_lib.sweep import main as sweep_main

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "site_data" / "sweep"
DEEP = [r for r in RULES if r.model in ("lightning", "softmax")]


def _on_atlas_grid(widths, attn, t):
    top = max(widths + attn)
    return t == 3 and ((len(attn) <= 2 and top <= 6) or (len(attn) == 3 and top <= 4))


def _parameters(widths, attn):
    return sum(2 * a * d + e * d for d, e, a in zip(widths, widths[1:], attn))


# ---------------------------------------------------------------- the distribution ---


def test_the_draws_follow_the_documented_distribution():
    cases = draw_architectures(np.random.default_rng(5), 3000)
    assert cases == draw_architectures(np.random.default_rng(5), 3000)  # the seed decides
    assert {c["kind"] for c in cases} == set(KINDS) and abs(sum(KINDS.values()) - 1) < 1e-12
    for c in cases:
        w, a, t = c["widths"], c["attn"], c["t"]
        assert 1 <= len(a) <= 6 and len(w) == len(a) + 1 and 1 <= t <= 5
        assert 1 <= min(w + a) and max(w + a) <= 10 and _parameters(w, a) <= 1500
        assert not _on_atlas_grid(w, a, t)
    depth = np.array([len(c["attn"]) for c in cases])
    assert (depth >= 4).mean() >= 0.5
    deep_wide = [c for c in cases if c["kind"] == "deep, wide input"]
    assert all(len(c["attn"]) >= 4 and c["widths"][0] >= 7 for c in deep_wide)
    for r in DEEP:  # every rule is attacked from inside and from just outside its domain
        case = lambda c: {k: c[k] for k in ("widths", "attn", "t")}  # noqa: E731
        assert any(r.in_domain(**case(c)) for c in cases), r.name
        assert any(r.near(**case(c)) for c in cases), r.name


def test_small_limits_are_honoured():
    limits = Limits(max_depth=1, max_width=3, max_attn=2, max_tokens=2, max_params=40)
    for c in draw_architectures(np.random.default_rng(1), 300, limits):
        assert len(c["attn"]) == 1 and max(c["widths"]) <= 3 and max(c["attn"]) <= 2
        assert c["t"] <= 2 and _parameters(c["widths"], c["attn"]) <= 40


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n "),
        ({"n": -5}, "n "),
        ({"shard_size": 0}, "shard_size"),
        ({"seed": -1}, "seed"),
        ({"time_limit": 0}, "time_limit"),
        ({"softmax_max_params": -1}, "softmax_max_params"),
        ({"limits": Limits(max_depth=0)}, "max_depth"),
        ({"limits": Limits(max_width=-2)}, "max_width"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SweepOptions(**kwargs)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--frobnicate"], "unrecognized arguments"),
        (["--max-depth", "0"], "positive integer"),
        (["--n", "-3"], "positive integer"),
        (["--workers", "0"], "positive integer"),
        (["--time-limit", "nan"], "positive number of seconds"),
        (["--seed", "-1"], "--seed must be"),
    ],
)
def test_the_command_line_refuses_bad_input_at_once(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        sweep_main([*argv, "--out", str(tmp_path / "never")])
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_an_unreachable_scheduler_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        sweep_main(["--n", "1", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "no Dask scheduler answers at 'tcp://127.0.0.1:9'" in err


def test_reading_a_folder_without_a_sweep_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no sweep in"):
        read_sweep(tmp_path)


def test_a_folder_with_another_sweep_is_refused(tmp_path):
    (tmp_path / "sweep.json").write_text('{"seed": 1}')
    with pytest.raises(ValueError, match="other options"):
        run_sweep(tmp_path, SweepOptions(n=1), progress=None)


# ---------------------------------------------------------------- one architecture ---


def test_a_record_certifies_and_judges_the_rules():
    # the depth-4 case where a read bound looking one layer ahead was wrong
    r = certify_architecture((7, 6, 6, 1, 1), (1, 1, 1, 1), 3, softmax=True)
    assert r["status"] == "ok" and r["lower"] == r["upper"] == 43 and r["P"] == 125
    assert r["softmax_lower"] == r["softmax_upper"] == 47
    assert r["upper_symmetries"] > 43 and "unread" in r["families"]
    assert "seen-dimension correction" in r["rules"] and "general widths" in r["near"]
    assert not r["disagreements"] and "general widths" in r["near_disagree"]


def test_the_time_limit_is_recorded_not_dropped():
    r = certify_architecture((10,) * 7, (10,) * 6, 5, time_limit=0.05)
    assert r["status"] == "time limit" and r.get("lower") is None
    assert r["rules"] and not r["disagreements"]  # the domains are known, no verdict given
    assert r["seconds"] >= 0.05


# ---------------------------------------------------------------- the committed sweep ---

RECORDS = read_sweep(COMMITTED) if (COMMITTED / "sweep.json").exists() else []


@pytest.mark.skipif(not RECORDS, reason="no committed sweep (make sweep)")
def test_the_committed_sweep_reaches_beyond_the_atlas():
    assert len(RECORDS) >= 20000
    assert not any(_on_atlas_grid(r["widths"], r["attn"], r["t"]) for r in RECORDS)
    assert np.mean([len(r["attn"]) >= 4 for r in RECORDS]) >= 0.5
    certified = [r["status"] == "ok" and r["lower"] == r["upper"] for r in RECORDS]
    assert np.mean(certified) >= 0.999, f"{len(certified) - sum(certified)} uncertified"
    for r in RECORDS:
        assert r["P"] == _parameters(r["widths"], r["attn"])
        assert r["status"] == "time limit" or 0 <= r["lower"] <= r["upper"] <= r["P"]


@pytest.mark.skipif(not RECORDS, reason="no committed sweep (make sweep)")
@pytest.mark.parametrize("rule", DEEP, ids=lambda r: r.name)
def test_every_rule_agrees_with_every_certified_case_of_the_sweep(rule):
    check = rule_checks(RECORDS)[rule.name]
    assert check.inside > 0, f"rule {rule.name!r}: no certified sweep case in its domain"
    assert not check.disagree_inside, (
        f"rule {rule.name!r} ({rule.domain_text}) is contradicted by certified sweep cases: "
        f"{list(check.disagree_inside)[:5]}"
    )


@pytest.mark.skipif(not RECORDS, reason="no committed sweep (make sweep)")
def test_a_random_sample_of_the_sweep_certifies_again():
    seed = random.randrange(2**31)
    rng = random.Random(seed)
    for r in rng.sample([r for r in RECORDS if r["P"] <= 400], 6):
        fresh = certify_architecture(r["widths"], r["attn"], r["t"], seed=rng.randrange(1, 10**6))
        label = f"widths {r['widths']}, attn {r['attn']}, t {r['t']} (sample seed {seed})"
        assert fresh["lower"] == fresh["upper"] == r["lower"] == r["upper"], label


# ---------------------------------------------------------------- a fresh sweep on Dask ---


def _strip(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def _children(pid):
    import psutil

    return psutil.Process(pid).children(recursive=True)


def test_a_fresh_sweep_on_two_workers(tmp_path):
    """A new seed every run, a worker killed mid-way, a resumed shard (about 20 s on two idle
    cores; the waits below only guard against a hang)."""
    seed = random.randrange(2**31)
    print(f"sweep seed {seed}")  # shown with the failure: rerun with this seed
    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "lsa_lib.sweep", "--out", str(out), "--seed", str(seed)]
    argv += ["--n", "24", "--shard-size", "4", "--max-params", "200", "--time-limit", "60"]
    argv += ["--softmax-max-params", "80", "--workers", "2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while not list(out.glob("shard-*.parquet")) and proc.poll() is None:
        time.sleep(0.2)
    workers = [p for p in _children(proc.pid) if "distributed" in " ".join(p.cmdline())]
    if proc.poll() is None and workers:  # kill one worker process: its shard runs elsewhere
        os.kill(workers[-1].pid, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    records = read_sweep(out)
    assert len(records) == 24 and "24 architectures" in stdout.decode()
    for rule, check in rule_checks(records).items():
        assert not check.disagree_inside, (
            f"rule {rule!r} is contradicted by freshly certified cases (sweep seed {seed}): "
            f"{list(check.disagree_inside)}"
        )
    assert all(r["status"] == "ok" for r in records), f"sweep seed {seed}"
    # a sweep killed after some shards resumes: the missing shard only, the same records
    (out / "shard-00002.parquet").unlink()
    result = run_sweep(out, SweepOptions.from_json(_manifest(out)), progress=None, workers=1)
    assert result["shards"] == 1 and result["skipped"] == 5
    assert _strip(read_sweep(out)) == _strip(records)


def _manifest(out):
    import json

    return json.loads((out / "sweep.json").read_text())


@pytest.mark.skipif(not RECORDS, reason="no committed sweep (make sweep)")
def test_the_ledgers_sweep_counts_are_current():
    """site_data/rules.json shows each deep rule's counts on the committed sweep."""
    import json

    stored = json.loads((ROOT / "site_data" / "rules.json").read_text())
    for name, check in rule_checks(RECORDS).items():
        counts = {"inside": check.inside, "outside": check.outside}
        counts["disagree_outside"] = check.disagree_outside
        assert stored[name].get("sweep") == counts, f"{name}: run tools/check_rules.py"
