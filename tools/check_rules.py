"""Check every rule of ``lsa_lib.rules`` and record the counts the ledger page shows.

For each rule: the certified cases it was checked on inside its domain, the certified cases
just outside it and how many of them disagree with the formula. Rules about deep lightning and
softmax networks are checked on every certified entry of the atlas (``site_data/atlas``) and of
the sweep (``site_data/sweep``, its counts kept apart) plus a seeded sample of architectures off
the atlas's grid; rules about other models on a seeded
sample of their own cases, each certified here. The result goes to ``site_data/rules.json``
(part of ``make atlas``); ``tests/test_rules.py`` recomputes the atlas counts and certifies a
fresh sample, so the stored file cannot drift from the rules.

A rule contradicted by a certified case inside its domain stops the script with its cases.

Usage: ``.venv/bin/python tools/check_rules.py [--out FILE] [--sample N]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "site_data" / "rules.json"
ATLAS = ROOT / "site_data" / "atlas"
SEED = 0
# atlas columns with each model's certified bounds
BOUNDS = {"lightning": ("lower", "upper"), "softmax": ("softmax_lower", "softmax_upper")}


def atlas_cases(entries: dict, model: str) -> list[tuple[dict[str, Any], int]]:
    """The atlas entries whose bounds for ``model`` meet, as (case, dimension)."""
    lo, up = BOUNDS[model]
    return [
        ({"widths": w, "attn": a, "t": 3}, e[lo])
        for (w, a), e in sorted(entries.items())
        if e.get(lo) is not None and e[lo] == e.get(up)
    ]


def read_atlas() -> dict:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import read_atlas as read
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return read(ATLAS)


def sample_cases(rule: Any, rng: np.random.Generator) -> list[tuple[dict[str, Any], int]]:
    """The rule's own sample, each case certified (uncertified cases are left out)."""
    out = []
    for case in rule.sample(rng):
        cert = rule.certificate(**case)
        if cert.certified:
            out.append((case, cert.rank))
    return out


def _counts(check: Any) -> dict[str, int]:
    return {
        "inside": check.inside,
        "outside": check.outside,
        "disagree_outside": check.disagree_outside,
    }


def sweep_checks() -> dict[str, Any]:
    """The lightning and softmax rules on the committed sweep (``site_data/sweep``), if any."""
    from lsa_lib.sweep import read_sweep, rule_checks

    if not (ROOT / "site_data" / "sweep" / "sweep.json").exists():
        return {}
    return rule_checks(read_sweep(ROOT / "site_data" / "sweep"))


def check_all(n_samples: int = 1) -> dict[str, dict[str, Any]]:
    """Every rule's counts: on the atlas and the sweep (lightning and softmax rules) and on its
    sample."""
    from lsa_lib.rules import RULES, check_rule

    entries = read_atlas()
    swept = sweep_checks()
    result = {}
    for rule in RULES:
        atlas = atlas_cases(entries, rule.model) if rule.model in BOUNDS else []
        rng = np.random.default_rng(SEED)
        sample = [c for _ in range(n_samples) for c in sample_cases(rule, rng)]
        checks = {"atlas": check_rule(rule, atlas), "sample": check_rule(rule, sample)}
        for where, check in checks.items():
            if check.disagree_inside:
                raise SystemExit(
                    f"rule {rule.name!r} ({rule.domain_text}) is contradicted by certified "
                    f"{where} cases inside its domain: {list(check.disagree_inside)[:5]}"
                )
        if rule.name in swept and swept[rule.name].disagree_inside:
            raise SystemExit(
                f"rule {rule.name!r} ({rule.domain_text}) is contradicted by certified sweep "
                f"cases inside its domain: {list(swept[rule.name].disagree_inside)[:5]}"
            )
        total = check_rule(rule, atlas + sample)
        result[rule.name] = {
            "label": rule.label,
            "model": rule.model,
            "domain": rule.domain_text,
            "atlas_cases": len(atlas),
            "sample_cases": len(sample),
            **_counts(total),
            "atlas": _counts(checks["atlas"]),
        }
        if rule.name in swept:
            result[rule.name]["sweep"] = _counts(swept[rule.name])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--sample", type=int, default=1, help="rounds of each rule's sample")
    args = parser.parse_args(argv)
    result = check_all(args.sample)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    for name, r in result.items():
        print(
            f"{name}: checked on {r['inside']} certified cases inside its domain (of "
            f"{r['atlas_cases']} certified atlas entries and {r['sample_cases']} sampled cases); "
            f"{r['disagree_outside']} of {r['outside']} just outside disagree"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
