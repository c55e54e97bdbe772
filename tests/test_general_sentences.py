"""Rules are stated from their objects: the ``{rule}`` role and the scan for general sentences.

The site build fails on a sentence of general form that cites no rule and names no grid
(``_ext/lsa_rules.py``); these tests run the same scan without Sphinx, and check that the
role's text is the rule's own statement, domain and counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import lsa_rules  # noqa: E402

from lsa_lib.rules import RULES, rule  # noqa: E402

LEDGER = json.loads((ROOT / "site_data" / "rules.json").read_text(encoding="utf-8"))


def test_every_general_sentence_cites_a_rule_a_box_or_where_it_was_seen():
    left = lsa_rules.general_sentences()
    assert not left, "general sentences that cite nothing:\n" + "\n".join(map(str, left))


def test_every_listed_exception_still_exists():
    assert lsa_rules.stale_allowances() == []


def test_every_listed_exception_gives_a_reason():
    import yaml

    data = yaml.safe_load((ROOT / "_ext" / "general_sentences.yml").read_text(encoding="utf-8"))
    for page, entries in data.items():
        for entry in entries:
            assert set(entry) == {"starts", "reason"}, (page, entry)
            assert len(entry["reason"].split()) >= 3, (page, entry)


@pytest.mark.parametrize(
    "sentence",
    [
        "Beyond the paper the formula plus $l$ holds wherever every hidden layer is fully read.",
        "A homogeneous normalizer drops the dimension by $l$, back to the lightning formula.",
        "With a common $a$ no failure occurs in the dimension.",
        "The rank is always two for these layers.",
    ],
)
def test_the_scan_flags_a_rule_stated_by_hand(sentence):
    (found,) = lsa_rules.sentences(sentence)
    assert lsa_rules.is_general(found) and not lsa_rules.cites(found)


@pytest.mark.parametrize(
    "markdown",
    [
        "Beyond the paper: {rule}`softmax formula`.",
        "On this grid the formula plus $l$ holds wherever every hidden layer is fully read.",
        "The formula holds for every case of {prf:ref}`prop-dim-deep-grid`.",
        "```{prf:conjecture} A box\n:label: x\n\nThe formula holds for every width.\n```",
        "The formula holds for every $\\delta$ in the table.",
    ],
)
def test_the_scan_passes_a_rule_cited_or_a_grid_named(markdown):
    assert not [
        s
        for s in lsa_rules.sentences(markdown)
        if s and not lsa_rules.cites(s) and lsa_rules.is_general(s)
    ]


def test_a_sentence_about_something_else_is_not_general():
    assert not lsa_rules.is_general("The reader always runs the set-up cell first.")


@pytest.mark.parametrize("name", list(LEDGER))
def test_the_role_states_the_rule_its_domain_and_its_counts(name):
    r, counts = rule(name), LEDGER[name]
    text = lsa_rules.rule_text(name)
    assert text.startswith(r.statement + ", wherever " + r.domain_text + " (")
    if counts["atlas_cases"]:
        assert f"{counts['atlas']['inside']:,} on the atlas" in text
    if "sweep" in counts:
        assert f"{counts['sweep']['inside']:,} on the sweep" in text
    assert lsa_rules.rule_anchor(name) == "rule-" + "-".join(
        "".join(ch if ch.isalnum() else " " for ch in name.lower()).split()
    )


def test_every_live_rule_has_a_row_of_the_ledger():
    assert sorted(LEDGER) == sorted(r.name for r in RULES)


def test_an_unknown_rule_is_refused_by_name():
    with pytest.raises(KeyError, match="no such rule"):
        lsa_rules.rule_parts("no such rule")
