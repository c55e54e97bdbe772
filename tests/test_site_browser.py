"""Every page of the built site, loaded in headless Chromium from a local server.

Run by ``make test`` after the site build (``pytest -m browser``). Fails on console errors
(except the documented noise of Jupyter Book 1.0.4 pages), failed or off-site requests, MathJax
errors or untypeset math, broken images, theorems without numbers and unresolved citations.
Under ``CI=true`` a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Documented noise of jupyter-book 1.0.4 pages (see the toolchain notes), nothing else.
IGNORED_CONSOLE = (
    "Identifier 'THEBE_JS_URL' has already been declared",
    "Got invalid theme mode",
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _pages() -> list[str]:
    if not SITE.is_dir():
        return []
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(
        str(p.relative_to(SITE))
        for p in SITE.rglob("*.html")
        if p.name not in skip
        and "_static" not in p.parts
        and "_sources" not in p.parts
        and str(p.relative_to(SITE)) != "index.html"
    )


@pytest.fixture(scope="module")
def server():
    if not SITE.is_dir():
        pytest.fail(f"{SITE} does not exist: build the site first (make site-check)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        message = "Chromium is missing: apt-get install chromium"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_site_has_pages():
    assert len(_pages()) >= 4, f"too few pages in {SITE}: {_pages()}"


@pytest.mark.parametrize("page_path", _pages())
def test_page(page_path, server, browser):
    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []

    def on_console(msg):
        if msg.type != "error" or any(n in msg.text for n in IGNORED_CONSOLE):
            return
        where = (msg.location or {}).get("url", "")
        if where.endswith("/favicon.ico"):  # the browser's own request, documented noise
            return
        problems.append(f"console {msg.type}: {msg.text} ({where})")

    page.on("console", on_console)
    page.on(
        "pageerror",
        lambda err: (
            problems.append(f"page error: {err}")
            if not any(n in str(err) for n in IGNORED_CONSOLE)
            else None
        ),
    )

    def on_request(request):
        url = request.url
        if url.startswith(("data:", "blob:", "about:")):
            return
        if not url.startswith(server):
            problems.append(f"off-site request: {url}")

    page.on("request", on_request)
    page.on(
        "requestfailed",
        lambda r: (
            problems.append(f"failed request: {r.url}")
            if not r.url.endswith("/favicon.ico")
            else None
        ),
    )
    page.on(
        "response",
        lambda r: (
            problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico")
            else None
        ),
    )
    page.goto(f"{server}/{page_path}", wait_until="load")
    has_math = page.evaluate("() => document.querySelectorAll('.math, div.math, span.math').length")
    if has_math:
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000
        )
        page.evaluate("() => MathJax.startup.promise")
        untypeset = page.evaluate(
            "() => [...document.querySelectorAll('.math')]"
            ".filter(e => !e.querySelector('mjx-container')).length"
        )
        if untypeset:
            problems.append(f"{untypeset} math element(s) not typeset by MathJax")
        if page.evaluate("() => document.querySelectorAll('mjx-merror').length"):
            problems.append("MathJax reported an error (mjx-merror)")
    broken = page.evaluate(
        "() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
        ".map(i => i.src)"
    )
    problems += [f"broken image: {src}" for src in broken]
    titles = page.evaluate(
        "() => [...document.querySelectorAll('div.proof > p.admonition-title, "
        "div.proof .admonition-title')].map(e => e.textContent.trim())"
    )
    problems += [f"theorem without a number: {t!r}" for t in titles if not re.search(r"\d", t)]
    body = page.evaluate("() => document.querySelector('main, article, body').innerText")
    unresolved = re.findall(r"\[(?:hmk2025|[a-z]+\d{4}[a-z]*)\]", body)
    problems += [f"unresolved citation {u}" for u in unresolved]
    context.close()
    assert not problems, f"{page_path}:\n" + "\n".join(sorted(set(problems)))


def _repository() -> tuple[str, str]:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = config["repository"]["url"].rstrip("/")
    return url.split("github.com/")[1], config["repository"].get("branch", "main")


@pytest.mark.parametrize(
    "notebook", sorted(p.stem for p in (ROOT / "book").glob("*.ipynb")), ids=str
)
def test_launch_buttons_point_at_the_notebook(notebook):
    """Binder and Colab buttons open this chapter's notebook in the configured repository."""
    html_path = SITE / "book" / f"{notebook}.html"
    if not html_path.exists():
        pytest.fail(f"{html_path} was not built")
    html = html_path.read_text()
    repo, branch = _repository()
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=tree/book/{notebook}.ipynb"
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/book/{notebook}.ipynb"
    assert f'href="{binder}"' in html, f"{notebook}: no Binder button to {binder}"
    assert f'href="{colab}"' in html, f"{notebook}: no Colab button to {colab}"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
