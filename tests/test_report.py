"""Tests of lsa_lib.report: tables with the values to assert, stable numbers, timings, widgets."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from lsa_lib.rank import ExactRank, FloatRank
from lsa_lib.report import Table, _explore, _parse, dimension_table, explorer, fmt, rel_diff, timed


def test_fmt_keeps_round_off_and_gaps_stable():
    assert fmt(None) == "–" and fmt(7) == "7" and fmt((2, 3)) == "(2, 3)" and fmt(True) == "True"
    assert fmt(0.0) == "< 1e-12" and fmt(0.31234) == "0.312" and fmt(-1234.5) == "-1.23e+03"
    # non-zero values below ROUNDOFF = 1e-12 are printed as a bound, whatever their last bits
    assert fmt(3.1e-16) == fmt(-8.9e-13) == fmt(np.float32(1e-20)) == "< 1e-12"
    assert fmt(3.2e8, "order") == "1e+08" and fmt(9.99e-3, "order") == "1e-03"
    assert fmt(1e4, "order") == "1e+04" and fmt(np.inf, "order") == "inf"
    assert fmt(0.5, ".2f") == "0.50" and fmt(3, ">4") == "   3"
    with pytest.raises(ValueError):
        fmt(0.0, "order")


def _row(d, a):
    return {"d": d, "a": a, "product": d * a, "ratio": d / a, "_hidden": object()}


def test_table_returns_the_values_to_assert():
    tab = Table.of(_row, [(2, 1), (3, 2), (5, 4)], formats={"ratio": ".2f"})
    assert len(tab) == 3 and tab.columns == ["d", "a", "product", "ratio", "_hidden"]
    assert tab["product"] == [2, 6, 20] and tab["ratio"][1] == 1.5
    assert [r["d"] for r in tab] == [2, 3, 5]
    text = str(tab)
    assert text.splitlines() == [
        "d  a  product  ratio",
        "2  1        2   2.00",
        "3  2        6   1.50",
        "5  4       20   1.25",
    ]
    assert "_hidden" not in text and repr(tab) == text
    md = tab.to_markdown().splitlines()
    assert md[0] == "| d | a | product | ratio |" and md[1] == "|---|---|---|---|"
    assert md[3] == "| 3 | 2 | 6 | 1.50 |"
    with pytest.raises(KeyError, match="no column 'rank'"):
        tab["rank"]
    # single values are passed as they are; rows may lack a column; callables format
    tab = Table.of(
        lambda n: {"n": n, "x": 1e-15} if n else {"n": n}, [0, 1], {"n": lambda v: f"#{v}"}
    )
    assert tab["x"] == [None, 1e-15]
    assert str(tab).splitlines()[1:] == ["#0        –", "#1  < 1e-12"]


def test_rel_diff():
    Z = np.array([[3.0, 4.0]])
    assert rel_diff(Z + np.array([[0.0, 0.5]]), Z) == pytest.approx(0.1)  # ‖(0, 0.5)‖ / ‖(3, 4)‖
    assert rel_diff(torch.zeros(2), torch.zeros(2)) == 0.0
    assert rel_diff(torch.ones(3, dtype=torch.float64), np.full(3, 2.0)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="reference Z vanishes"):
        rel_diff(np.ones(2), np.zeros(2))
    with pytest.raises(ValueError, match="same shape"):
        rel_diff(np.ones(2), np.ones(3))


def test_timed_returns_the_result_and_times():
    calls = []
    out = timed(lambda x: calls.append(x) or x * 2, 21, repeats=3, warmup=True)
    assert out.result == 42 and len(calls) == 4
    assert all(isinstance(v, float) and v >= 0 for v in (out.wall, out.cpu))  # never the value
    with pytest.raises(ValueError, match="repeats"):
        timed(print, repeats=0)


def test_dimension_table_lightning():
    tab = dimension_table([((2, 2), (2,)), ((5, 4, 1), (2, 1))])
    assert tab.columns == ["widths", "attn", "P", "expected", "exact", "P / dim", "float", "gap ≥"]
    assert tab["P"] == [12, 52] and tab["expected"] == [7, None]
    exact, floats = tab["exact"], tab["float"]
    assert all(isinstance(r, ExactRank) and r.certified for r in exact)
    assert [r.rank for r in exact] == [7, 28] and [r.rank for r in floats] == [7, 28]
    assert all(isinstance(r, FloatRank) and r.trusted for r in floats)
    assert tab["P / dim"] == [12 / 7, 52 / 28]
    lines = str(tab).splitlines()
    assert lines[1].split()[-4:-2] == ["7", "1.71"] and " – " in lines[2]
    assert tab["gap ≥"][0] == floats[0].gap and lines[1].split()[-1].startswith("1e+")


def test_dimension_table_softmax_and_untrusted_readings():
    tab = dimension_table(
        [((3, 3, 3), (2, 2)), ((10, 10, 10), (2, 2))],
        normalizer="exp",
        methods=("float",),
        n_inputs=250,
        dtype="float32",
    )
    assert tab.columns == ["widths", "attn", "P", "expected", "float", "gap ≥"]
    assert tab["expected"] == [25, 172]
    last = tab["float"][-1]
    assert not last.trusted and last.threshold_rank != 172  # float32 cannot read δ = 10
    assert str(tab).splitlines()[-1].split()[-2].endswith("?")


def test_dimension_table_bad_input():
    with pytest.raises(ValueError, match="exact method"):
        dimension_table([((2, 2), (2,))], normalizer="exp")
    with pytest.raises(ValueError, match="method"):
        dimension_table([((2, 2), (2,))], methods=("symbolic",))
    with pytest.raises(ValueError, match="empty"):
        dimension_table([])


def test_explorer_text_and_widget(capsys):
    text = _explore((5, 4, 1), (2, 1), 3, certify=True)
    assert "fully read" in text and "28" in text.splitlines()[1]
    assert "exact" not in _explore((2, 2), (2,), 3, certify=False)
    assert _parse("(3, 3, 3)", "widths") == (3, 3, 3)
    with pytest.raises(ValueError, match="integers separated by commas"):
        _parse("3; x", "widths")
    pytest.importorskip("ipywidgets")
    capsys.readouterr()
    w = explorer()  # outside a kernel the widget's output goes to stdout
    widths_box, attn_box, t_box, out = w.children
    assert "(3, 3, 3)" in capsys.readouterr().out
    attn_box.value = "2, x"  # bad input is reported in the output, not raised
    assert "cannot use this input" in capsys.readouterr().out
    widths_box.value, attn_box.value = "20, 20", "20"  # too big for a live certificate
    shown = capsys.readouterr().out
    assert "more than 400 parameters" in shown and "exact" not in shown


def test_table_html_form_has_the_cells_of_the_text_form():
    tab = Table.of(_row, [(2, 1), (3, 2)], formats={"ratio": ".2f"})
    tab.rows.append({"d": "<b>", "a": None, "product": "a & b", "ratio": 0.5})
    page = tab._repr_html_()
    head = re.findall(r'<th scope="col">(.*?)</th>', page)
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", page)[1:]]
    assert head == ["d", "a", "product", "ratio"]  # hidden columns stay hidden
    text = [line.split() for line in str(tab).splitlines()[1:3]]
    assert cells[:2] == text == [["2", "1", "2", "2.00"], ["3", "2", "6", "1.50"]]
    assert cells[2] == ["&lt;b&gt;", "–", "a &amp; b", "0.50"]  # escaped, None as in text
    assert page.startswith('<div class="book-table-scroll"') and page.count("<table") == 1
    # in a notebook display() sends both forms; the text one is what print() shows
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(tab)
    assert data["text/plain"] == str(tab) and data["text/html"] == page
