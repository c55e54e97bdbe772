"""Write the data of the website's rotatable Figure 1 (the Whitney umbrella slice).

``lsa_lib.m212.umbrella_slice`` computes the slice of the quartic ``M_{2,1,2}``;
this script stores its surface grid and singular curve as JSON for the page's plain-JavaScript
viewer, and the static picture (``plot_umbrella_slice``) as a PNG for print and for readers
without JavaScript. All library calls are in :func:`compute`.

Usage: ``.venv/bin/python tools/make_umbrella.py`` (run by ``make atlas``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "site_data" / "umbrella"


def compute(n: int = 41) -> tuple[dict[str, Any], Any]:
    """The slice's data (plain lists) and the static figure, from ``lsa_lib``."""
    import matplotlib

    matplotlib.use("Agg")
    from lsa_lib.m212 import umbrella_slice
    from lsa_lib.plotting import plot_umbrella_slice, use_book_style

    use_book_style()
    data = umbrella_slice(n=n)
    U, V, S = data.surface
    rounded = lambda a: [[round(float(x), 4) for x in row] for row in a]  # noqa: E731
    payload = {
        "equation": str(data.equation),
        "axes": ["u", "v", "s"],
        "surface": {"u": rounded(U), "v": rounded(V), "s": rounded(S)},
        "singular_in_m": rounded(data.singular_in_m),
        "singular_not_in_m": rounded(data.singular_not_in_m),
    }
    return payload, plot_umbrella_slice(data)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    payload, fig = compute()
    text = json.dumps(payload, separators=(",", ":"))
    (OUT / "umbrella.json").write_text(text + "\n")
    fig.savefig(OUT / "umbrella.png", dpi=100, metadata={"Software": None})
    png = (OUT / "umbrella.png").stat().st_size
    print(f"umbrella.json {len(text) / 1024:.0f} KiB, umbrella.png {png / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
