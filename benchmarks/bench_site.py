"""Weight and speed of the built website, per page type, printed side by side with a previous run.

Run with ``make site-bench`` (after ``make site-check`` or ``make book``), or directly::

    .venv/bin/python benchmarks/bench_site.py [--site _build/html] [--runs 3]
        [--before benchmarks/results/site-before.json] [--save FILE] [--no-lighthouse]

The built site is served on 127.0.0.1 with gzip (level 6, as a web host does) and read in
Debian's Chromium:

1. **Bytes and requests** of every page (pages are found in the built site; their type comes
   from the table of contents: the landing page, course pages, research notes, the atlas, the
   rotatable figure, the "What is checked" ledger, API pages, other pages). A fresh browser
   profile per page; "first view" is what the page fetched once loaded, before any scrolling
   (figures below the fold load lazily), "whole page" after scrolling to its end. Sizes are the
   bytes the server sent (gzip where it compresses) and the files' own sizes ("raw").
2. **Throttled timing** of one page of each type, under the mobile throttling Lighthouse
   simulates, applied for real through the DevTools protocol (150 ms round trip, 1.6 Mbit/s
   down, CPU slowed 4×, 390 px window, cold cache): first contentful paint, and the moment
   MathJax has typeset the math the reader sees ("math done").
3. **Lighthouse** (npm's, run against Debian's Chromium; default mobile preset, simulated
   throttling): the four category scores and the metrics behind performance, each page
   ``--runs`` times, the median shown.

The machine is shared: every timing and Lighthouse figure varies from run to run, so each is
a median of ``--runs`` runs, and the load average of the machine is printed with it. Nothing
here is asserted; the browser test (``tests/test_site_browser.py``) checks the limits.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site_theme"))
from site_pages import CHROMIUM, FLAGS, site_pages, toc_kinds  # noqa: E402

LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".map", ".txt", ".xml", ".inv"}
TYPES = ("landing", "course", "notes", "atlas", "umbrella", "ledger", "api", "other")
# Lighthouse's mobile preset, applied for real (DevTools throttling)
RTT_MS, DOWN_BPS, UP_BPS, CPU_SLOWDOWN = 150, 1.6e6, 750e3, 4


# ------------------------------------------------------------------------------------------
# the server
# ------------------------------------------------------------------------------------------


class GzipServer:
    """A threaded static server of ``site`` on 127.0.0.1 that gzips text and logs bytes sent."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.log: list[tuple[str, int, int]] = []  # (path, bytes sent, raw bytes)
        self.lock = threading.Lock()
        self.cache: dict[Path, bytes] = {}
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def end_headers(self):
                self.send_header("Cache-Control", "max-age=600")
                super().end_headers()

            def do_GET(self):
                path = Path(self.translate_path(self.path))
                if path.is_dir():
                    path = path / "index.html"
                gz = "gzip" in self.headers.get("Accept-Encoding", "")
                if not path.is_file() or path.suffix not in COMPRESSED or not gz:
                    size = path.stat().st_size if path.is_file() else 0
                    with server.lock:
                        server.log.append((self.path, size, size))
                    return super().do_GET()
                body = server.compressed(path)
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(str(path)))
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with server.lock:
                    server.log.append((self.path, len(body), path.stat().st_size))

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(site))
        )
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def compressed(self, path: Path) -> bytes:
        with self.lock:
            if path not in self.cache:
                self.cache[path] = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
            return self.cache[path]

    def take(self) -> list[tuple[str, int, int]]:
        with self.lock:
            out, self.log = self.log, []
        return out

    def close(self) -> None:
        self.httpd.shutdown()


# ------------------------------------------------------------------------------------------
# pages and their types
# ------------------------------------------------------------------------------------------


def page_types(site: Path, toc_file: Path) -> dict[str, str]:
    """Every page of the built site → its type: the table of contents' kind (landing, course,
    notes, other), with the atlas, the rotatable figure, the ledger and the API pages apart."""
    kinds = toc_kinds(toc_file)
    out = {}
    for rel in site_pages(site):
        doc = rel[: -len(".html")]
        kind = kinds.get(doc, "other")
        if doc.startswith("book/api/"):
            kind = "api"
        elif doc.endswith("/atlas"):
            kind = "atlas"
        elif doc.endswith("/umbrella"):
            kind = "umbrella"
        elif doc.endswith("/checked"):
            kind = "ledger"
        out[rel] = kind
    return out


# ------------------------------------------------------------------------------------------
# bytes and requests
# ------------------------------------------------------------------------------------------

WAIT_MATH = """async () => {
  if (!document.querySelector('.math')) return;
  for (let i = 0; i < 400 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 25));
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
}"""

SCROLL = """async () => {
  const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
  for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
    window.scrollTo(0, y);
    await new Promise(r => setTimeout(r, 40));
  }
  window.scrollTo(0, document.documentElement.scrollHeight);
  await new Promise(r => setTimeout(r, 300));
}"""


def _sum(log: list[tuple[str, int, int]]) -> dict[str, int]:
    return {
        "requests": len(log),
        "gz": sum(s for _, s, _ in log),
        "raw": sum(r for _, _, r in log),
    }


def measure_bytes(browser, server: GzipServer, pages: dict[str, str]) -> dict[str, dict]:
    out = {}
    for rel, kind in pages.items():
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        server.take()
        page.goto(f"{server.url}/{rel}", wait_until="load")
        page.evaluate(WAIT_MATH)
        page.wait_for_load_state("networkidle")
        first = server.take()
        page.evaluate(SCROLL)
        page.wait_for_load_state("networkidle")
        page.evaluate(WAIT_MATH)
        rest = server.take()
        nodes = page.evaluate("() => document.getElementsByTagName('*').length")
        height = page.evaluate("() => document.documentElement.scrollHeight")
        context.close()
        out[rel] = {
            "type": kind,
            "first": _sum(first),
            "whole": _sum(first + rest),
            "dom": nodes,
            "height": height,
        }
    return out


# ------------------------------------------------------------------------------------------
# throttled timing
# ------------------------------------------------------------------------------------------

MARK_MATH = """(() => {
  const t = setInterval(() => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      clearInterval(t);
      MathJax.startup.promise.then(() => { window.__mathDone = performance.now(); });
    }
  }, 20);
})();"""


def throttled_timing(browser, url: str) -> dict[str, float | None]:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": RTT_MS,
            "downloadThroughput": DOWN_BPS / 8,
            "uploadThroughput": UP_BPS / 8,
        },
    )
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    page.add_init_script(MARK_MATH)
    page.goto(url, wait_until="load", timeout=120000)
    has_math = page.evaluate("() => !!document.querySelector('.math')")
    if has_math:
        page.wait_for_function("() => window.__mathDone !== undefined", timeout=120000)
    result = page.evaluate(
        """() => {
          const fcp = performance.getEntriesByName('first-contentful-paint')[0];
          const nav = performance.getEntriesByType('navigation')[0];
          return {fcp: fcp ? fcp.startTime : null, load: nav ? nav.loadEventEnd : null,
                  math: window.__mathDone === undefined ? null : window.__mathDone};
        }"""
    )
    context.close()
    return {k: (v / 1000 if v is not None else None) for k, v in result.items()}


# ------------------------------------------------------------------------------------------
# Lighthouse
# ------------------------------------------------------------------------------------------

METRICS = {
    "FCP": "first-contentful-paint",
    "LCP": "largest-contentful-paint",
    "TBT": "total-blocking-time",
    "CLS": "cumulative-layout-shift",
    "SI": "speed-index",
}


def lighthouse(url: str, tries: int = 2) -> dict[str, float] | None:
    """One Lighthouse run (retried once: on a loaded machine a run can time out); None if
    every try failed."""
    for _ in range(tries):
        try:
            return _lighthouse(url)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, KeyError) as err:
            print(f"Lighthouse run failed for {url}: {err}", file=sys.stderr)
    return None


def _lighthouse(url: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        flags = " ".join([*FLAGS, f"--user-data-dir={tmp}/profile"])
        env = dict(os.environ, CHROME_PATH=CHROMIUM)
        subprocess.run(
            [
                "node",
                str(LIGHTHOUSE),
                url,
                "--quiet",
                "--output=json",
                f"--output-path={report}",
                f"--chrome-flags={flags}",
                "--only-categories=performance,accessibility,best-practices,seo",
                "--max-wait-for-load=90000",
            ],
            check=True,
            env=env,
            timeout=600,
        )
        data = json.loads(report.read_text())
    out = {
        k: round(100 * v["score"]) for k, v in data["categories"].items() if v["score"] is not None
    }
    for name, audit in METRICS.items():
        value = data["audits"][audit].get("numericValue")
        out[name] = value / (1 if name == "CLS" else 1000) if value is not None else None
    return out


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ------------------------------------------------------------------------------------------
# printing
# ------------------------------------------------------------------------------------------


def kb(n: float) -> str:
    return f"{n / 1024:.0f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.2f} MB"


def span(values, f) -> str:
    values = sorted(values)
    if not values:
        return "–"
    return f(values[0]) if f(values[0]) == f(values[-1]) else f"{f(values[0])}–{f(values[-1])}"


def summary_by_type(pages: dict[str, dict]) -> dict[str, dict[str, str]]:
    out = {}
    for kind in TYPES:
        rows = [p for p in pages.values() if p["type"] == kind]
        if not rows:
            continue
        out[kind] = {
            "pages": str(len(rows)),
            "requests": span([r["whole"]["requests"] for r in rows], str),
            "first view gz": span([r["first"]["gz"] for r in rows], kb),
            "whole gz": span([r["whole"]["gz"] for r in rows], kb),
            "whole raw": span([r["whole"]["raw"] for r in rows], kb),
            "DOM nodes": span([r["dom"] for r in rows], lambda n: f"{n / 1000:.1f}k"),
            "height 390 px": span([r["height"] for r in rows], lambda n: f"{n / 1000:.1f}k"),
        }
    return out


def print_side_by_side(title: str, after: dict, before: dict | None) -> None:
    print(f"\n{title}")
    rows = []
    for key, values in after.items():
        for field, value in values.items():
            old = (before or {}).get(key, {}).get(field, "")
            rows.append((key, field, str(old) if before else "", str(value)))
    widths = [max(len(r[i]) for r in rows + [("page", "", "before", "now")]) for i in range(4)]
    header = ("page", "", "before", "now") if before else ("page", "", "", "now")
    for r in [header, *rows]:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        if before:
            cells.append(r[2].rjust(widths[2]))
        cells.append(r[3].rjust(widths[3]))
        print("  ".join(cells))


def representative(pages: dict[str, dict]) -> dict[str, str]:
    """One page per type for the timings: the heaviest whole-page weight of its type (the
    landing, atlas, umbrella and ledger are single pages)."""
    out = {}
    for kind in ("landing", "course", "notes", "atlas", "umbrella", "ledger"):
        rows = [(p["whole"]["gz"], rel) for rel, p in pages.items() if p["type"] == kind]
        if rows:
            out[kind] = max(rows)[1]
    return out


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} / {five:.1f} (1 / 5 min, {os.cpu_count()} cores)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--toc", type=Path, default=ROOT / "_toc.yml")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a JSON file saved by an earlier run")
    parser.add_argument("--save", type=Path, help="write this run's figures here (JSON)")
    parser.add_argument("--no-lighthouse", action="store_true")
    parser.add_argument("--only", nargs="*", help="page types to time (default: all)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit("Chromium is missing: apt-get install chromium")
    if not args.no_lighthouse and not LIGHTHOUSE.exists():
        sys.exit("Lighthouse is missing: npm ci (package.json's devDependencies)")
    before = json.loads(args.before.read_text()) if args.before else None

    from playwright.sync_api import sync_playwright

    server = GzipServer(args.site)
    result: dict = {"load": {"start": load()}}
    try:
        with sync_playwright() as p:
            if True:  # playwright gives the browser its own fresh profile
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                pages = measure_bytes(browser, server, page_types(args.site, args.toc))
                result["pages"] = pages
                result["by_type"] = summary_by_type(pages)
                chosen = representative(pages)
                if args.only:
                    chosen = {k: v for k, v in chosen.items() if k in args.only}
                result["chosen"] = chosen
                timing = {}
                for kind, rel in chosen.items():
                    runs = [
                        throttled_timing(browser, f"{server.url}/{rel}") for _ in range(args.runs)
                    ]
                    timing[kind] = {
                        "page": rel,
                        "FCP s": f"{median([r['fcp'] for r in runs]):.1f}",
                        "math done s": (
                            f"{median([r['math'] for r in runs]):.1f}"
                            if median([r["math"] for r in runs]) is not None
                            else "no math"
                        ),
                    }
                result["throttled"] = timing
                browser.close()
        if not args.no_lighthouse:
            scores = {}
            for kind, rel in chosen.items():
                runs = [lighthouse(f"{server.url}/{rel}") for _ in range(args.runs)]
                failed = runs.count(None)
                runs = [r for r in runs if r is not None]
                if not runs:
                    scores[kind] = {"page": rel, "performance": f"failed ({failed} runs)"}
                    continue
                med = {k: median([r.get(k) for r in runs]) for k in runs[0]}
                perf = sorted(r["performance"] for r in runs)
                note = f"; {failed} failed" if failed else ""
                scores[kind] = {
                    "page": rel,
                    "performance": f"{med['performance']:.0f} ({', '.join(map(str, perf))}{note})",
                    "accessibility": f"{med['accessibility']:.0f}",
                    "best practices": f"{med['best-practices']:.0f}",
                    "SEO": f"{med['seo']:.0f}",
                    "FCP s": f"{med['FCP']:.1f}",
                    "LCP s": f"{med['LCP']:.1f}",
                    "TBT ms": f"{1000 * med['TBT']:.0f}",
                    "CLS": f"{med['CLS']:.3f}",
                    "SI s": f"{med['SI']:.1f}",
                }
            result["lighthouse"] = scores
    finally:
        server.close()
    result["load"]["end"] = load()

    print(
        f"Site: {args.site}; machine load at start {result['load']['start']}, "
        f"at end {result['load']['end']}"
    )
    if before:
        print(f"Before: {args.before} (load then {before.get('load', {})})")
    print_side_by_side(
        "1. Bytes and requests per page type (gzip server; first view = before scrolling)",
        result["by_type"],
        before and before.get("by_type"),
    )
    print_side_by_side(
        f"2. Throttled timing (median of {args.runs}; 150 ms RTT, 1.6 Mbit/s, CPU ×4, 390 px)",
        result["throttled"],
        before and before.get("throttled"),
    )
    if "lighthouse" in result:
        print_side_by_side(
            f"3. Lighthouse mobile (median of {args.runs} runs; the performance runs in brackets)",
            result["lighthouse"],
            before and before.get("lighthouse"),
        )
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        print(f"\nsaved: {args.save}")


if __name__ == "__main__":
    main()
