"""The data of the website's atlas of dimensions (``site_data/atlas``, written by ``make atlas``).

Every entry is checked against the closed forms, computed here from the formulas themselves
(not read from the data or from the library): the parameter count, the hypotheses of the
dimension formulas, the formula's value, and — where the formula applies — that the certified
dimension is exact and equal to it. Every lightning entry must be certified, and every softmax
entry certified or given a reason. A random sample of entries, different on every run, is
certified again with a fresh random seed and the fiber families (through the script's
library-calling functions), and the new bounds must meet at the stored value. Every softmax
estimate must lie within the stored softmax bounds (ball arithmetic and the surviving fiber
directions), which another sample certifies again. The labels the page links must exist in the
book, and the rules it names must be the library's.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ATLAS = ROOT / "site_data" / "atlas"
SAMPLE = 12


def _load() -> tuple[dict, dict]:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import read_atlas
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return json.loads((ATLAS / "index.json").read_text()), read_atlas(ATLAS)


INDEX, ENTRIES = _load() if (ATLAS / "index.json").exists() else ({}, {})


# --- closed forms, written out here -------------------------------------------------------


def params(w, a):
    """P = Σ_i (2 a_i d_{i-1} + d_i d_{i-1})."""
    return sum(2 * a[i] * w[i] + w[i + 1] * w[i] for i in range(len(a)))


def rhs(w, a, normalized=False):
    """d_l d_{l-1} + Σ_{i<l} d_i (d_{i-1} − d_i) + Σ_i r_i (2 d_{i-1} − r_i) − l, r_i = min(a_i, d_{i-1})."""
    l = len(a)
    r = [min(a[i], w[i]) for i in range(l)]
    value = w[l] * w[l - 1] + sum(w[i] * (w[i - 1] - w[i]) for i in range(1, l))
    value += sum(r[i] * (2 * w[i] - r[i]) for i in range(l))
    return value if normalized else value - l


def read_dimensions(w, a):
    """What the later layers read of each hidden space, written out as min over k ≥ i of
    d_k + 2 Σ_{j=i+1..k} r_j (the unrolled recursion of the seen dimension)."""
    l = len(a)
    r = [min(a[j], w[j]) for j in range(l)]
    return [min(w[k] + 2 * sum(r[i:k]) for k in range(i, l + 1)) for i in range(l + 1)]


def fully_read(w, a):
    seen = read_dimensions(w, a)
    return all(seen[i] >= w[i] for i in range(1, len(a)) if w[i] < w[i - 1])


def non_increasing(w, a):
    return all(w[i] >= w[i + 1] for i in range(len(a) - 1))


def hypotheses_hold(w, a):
    """The lightning formulas' hypotheses (t = 3 ≥ 2 tokens throughout the atlas)."""
    l = len(a)
    if l == 1:
        return True
    # a token collapse (a_i = 1) hurts only a later layer with antisymmetric directions (a_j ≥ 2)
    if any(a[i] == 1 and any(x >= 2 for x in a[i + 1 :]) for i in range(l - 1)):
        return False
    return non_increasing(w, a) and fully_read(w, a)


def softmax_covered(w, a):
    """The softmax formula's hypotheses: those of lightning but the token collapse."""
    return non_increasing(w, a) and fully_read(w, a)


# --- the tests ------------------------------------------------------------------------------


def test_the_atlas_covers_its_grid():
    if not ENTRIES:
        pytest.fail(f"no atlas data in {ATLAS}: run `make atlas`")
    grid = {int(k): v for k, v in INDEX["grid"].items()}
    expected = sum(grid[l] ** (2 * l + 1) for l in grid)
    assert len(ENTRIES) == expected == INDEX["entries"]
    for w, a in ENTRIES:
        assert len(w) == len(a) + 1 and max(w + a) <= grid[len(a)] and min(w + a) >= 1


def test_every_entry_against_the_closed_forms():
    bad = []
    agree = 0
    for (w, a), e in ENTRIES.items():
        label = f"widths {w}, attn {a}"
        if e["P"] != params(w, a):
            bad.append(f"{label}: P = {e['P']}, closed form {params(w, a)}")
        if e["formula_rhs"] != rhs(w, a):
            bad.append(f"{label}: right-hand side {e['formula_rhs']}, closed form {rhs(w, a)}")
        if not 0 <= e["lower"] <= e["upper"] <= e["P"]:
            bad.append(f"{label}: bounds {e['lower']}..{e['upper']} out of order (P = {e['P']})")
        if hypotheses_hold(w, a):
            if e["formula"] != rhs(w, a) or e["failed"]:
                bad.append(
                    f"{label}: formula {e['formula']} / failed {e['failed']}, expected {rhs(w, a)}"
                )
            if not e["lower"] == e["upper"] == rhs(w, a):
                bad.append(f"{label}: certified {e['lower']}..{e['upper']} ≠ formula {rhs(w, a)}")
            agree += 1
        elif e["formula"] is not None or not e["failed"]:
            bad.append(
                f"{label}: a hypothesis fails, yet formula {e['formula']}, failed {e['failed']}"
            )
        softmax = rhs(w, a, normalized=True) if softmax_covered(w, a) else None
        if e["softmax_formula"] != softmax:
            bad.append(f"{label}: softmax formula {e['softmax_formula']}, closed form {softmax}")
    assert not bad, f"{len(bad)} entries disagree, e.g.\n" + "\n".join(bad[:20])
    assert agree > 1000  # the formula applies to a good part of the grid


def test_every_lightning_entry_is_certified():
    """The fiber families close every lightning bound of the grid."""
    open_entries = [(w, a) for (w, a), e in ENTRIES.items() if e["lower"] != e["upper"]]
    assert not open_entries, f"{len(open_entries)} open, e.g. {open_entries[:5]}"


def test_every_softmax_entry_is_certified_or_says_why():
    reasons = set(INDEX["open_reasons"])
    for (w, a), e in ENTRIES.items():
        met = e["softmax_lower"] == e["softmax_upper"]
        assert (e["softmax_open"] is None) == met, (w, a, e["softmax_open"])
        assert met or e["softmax_open"] in reasons, (w, a)
        assert 1 <= e["softmax_points"] <= INDEX["softmax_points"]
        assert met or e["softmax_points"] == INDEX["softmax_points"]  # every point was tried


def test_families_and_rules_are_the_librarys():
    from lsa_lib.dimension import FIBER_FAMILIES
    from lsa_lib.rules import RULES

    assert [f["name"] for f in INDEX["families"]] == list(FIBER_FAMILIES)
    atlas_rules = [r for r in RULES if r.model in ("lightning", "softmax")]
    assert [r["name"] for r in INDEX["rules"]] == [r.name for r in atlas_rules]
    assert [r["label"] for r in INDEX["rules"]] == [r.label for r in atlas_rules]
    by_name = {r.name: r for r in atlas_rules}
    for (w, a), e in ENTRIES.items():
        case = {"widths": w, "attn": a, "t": 3}
        for column, model in (("rules", "lightning"), ("softmax_rules", "softmax")):
            expected = [r.name for r in atlas_rules if r.model == model and r.in_domain(**case)]
            assert e[column] == expected, (w, a, column)
            for name in e[column]:  # a rule that covers a certified entry gives its value
                lo = "lower" if model == "lightning" else "softmax_lower"
                up = "upper" if model == "lightning" else "softmax_upper"
                if e[lo] == e[up]:
                    assert by_name[name].formula(**case) == e[lo], (w, a, name)
        assert set(e["families"]) <= set(FIBER_FAMILIES)
        assert "collapse" not in e["softmax_families"]  # no symmetry of the softmax network


def test_counts_in_the_index():
    for depth, c in INDEX["counts"].items():
        mine = [e for (_, a), e in ENTRIES.items() if len(a) == int(depth)]
        assert c["entries"] == len(mine)
        assert c["lightning"] == sum(e["lower"] == e["upper"] for e in mine)
        assert c["softmax"] == sum(e["softmax_lower"] == e["softmax_upper"] for e in mine)


def test_every_label_the_page_links_is_in_the_book():
    """Labels, not page paths: each must be a box's label or a target somewhere in the book."""
    text = ""
    for path in (ROOT / "book").rglob("*"):
        if path.suffix in (".md", ".ipynb"):
            text += path.read_text(encoding="utf-8")
    labels = [lb for lb, _ in INDEX["links"].values()]
    labels += [f["label"] for f in INDEX["families"]] + [r["label"] for r in INDEX["rules"]]
    missing = [lb for lb in labels if f":label: {lb}" not in text and f"({lb})=" not in text]
    assert not missing, missing
    page = (ROOT / "book" / "atlas.md").read_text(encoding="utf-8")
    cited = [lb for lb, _ in INDEX["links"].values()] + [f["label"] for f in INDEX["families"]]
    assert all(f"`{lb}`" in page for lb in cited)  # {prf:ref}: the build fails if one goes


def test_a_random_sample_certifies_again():
    """A new sample on every run, certified again with a new seed; the seed is in the message."""
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    archs = rng.sample(sorted(ENTRIES), SAMPLE)
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import compute_entry
    finally:
        sys.path.remove(str(ROOT / "tools"))
    for w, a in archs:
        stored = ENTRIES[(w, a)]
        fresh = compute_entry(w, a, softmax=False, seed=rng.randrange(1, 10**6))
        label = f"widths {w}, attn {a} (sample seed {seed})"
        for key in ("P", "formula", "formula_rhs", "failed", "softmax_formula", "rules"):
            assert fresh[key] == stored[key], f"{label}: {key}"
        # both pairs of bounds are certified: with the fiber families they meet again, there
        assert fresh["lower"] == fresh["upper"] == stored["lower"] == stored["upper"], label
        assert fresh["families"] == stored["families"], label


def test_softmax_estimates_lie_within_the_certified_bounds():
    """Every float64 estimate against the stored certificate (ball arithmetic, symmetries)."""
    bad, certified = [], 0
    for (w, a), e in ENTRIES.items():
        lower, upper, estimate = e["softmax_lower"], e["softmax_upper"], e["softmax_rank"]
        if not 0 < lower <= upper <= e["P"]:
            bad.append(f"widths {w}, attn {a}: softmax bounds {lower}..{upper} (P = {e['P']})")
        elif estimate is not None and not lower <= estimate <= upper:
            bad.append(f"widths {w}, attn {a}: estimate {estimate} outside {lower}..{upper}")
        certified += lower == upper
    assert not bad, f"{len(bad)} entries disagree, e.g.\n" + "\n".join(bad[:20])
    assert certified > 1000


def test_a_random_sample_of_softmax_bounds_certifies_again():
    """A new sample and a new seed on every run; both pairs of bounds are proofs, so they overlap."""
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from make_atlas import softmax_entry
    finally:
        sys.path.remove(str(ROOT / "tools"))
    for w, a in rng.sample(sorted(ENTRIES), SAMPLE):
        stored = ENTRIES[(w, a)]
        fresh = softmax_entry(w, a, seed=rng.randrange(1, 10**6))
        label = f"widths {w}, attn {a} (sample seed {seed})"
        assert fresh["softmax_lower"] <= stored["softmax_upper"], label
        assert stored["softmax_lower"] <= fresh["softmax_upper"], label
