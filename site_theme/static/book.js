/* The book's small additions to the theme's behaviour (every page; plain JavaScript).
 *
 * - loadBookData(url): the data of the interactive pages, loaded by a <script> tag so that it
 *   also works when the site is opened from the file system, where `fetch` is refused. Next to
 *   each `_static/<folder>/<name>.json` the build writes `<name>.js`, which registers the same
 *   data as self.bookData["<folder>/<name>.json"] (site_theme/book_site_html.py).
 * - The page-contents and chapter drawers of a phone close when one of their links is tapped.
 * - A link in the title of a collapsible box (the "Exercise N" link in "Solution to Exercise N")
 *   navigates without also reaching the box's toggle handler, which fails on such a click.
 * - Boxes that scroll sideways: a formula wider than its column (inline or displayed), a wide
 *   table or printed output, a wide figure on a phone. Each such box gets the class
 *   book-scroll (book.css: it scrolls, with a shadow at the hidden edge) and is made
 *   focusable, so that it can be scrolled from the keyboard; a formula that fits is neither
 *   cut nor scrollable. Checked when MathJax has typeset a formula and when the window
 *   changes size.
 * - MathJax in steps: the formulas of the first screen arrive typeset (book_site_math); MathJax
 *   finds the others a few at a time, yielding to the browser between steps, instead of in
 *   one long task that freezes a phone for the better part of a second.
 * - MathJax on demand: a page without formulas of its own does not load MathJax; when a
 *   formula of its sidebar (a page title) comes into view, MathJax is loaded to typeset it.
 * - Print: a display equation wider than the printed column is scaled to fit it (also one
 *   that MathJax typesets while the page is printed).
 * - Opened from the file system, the search page shows no page summaries (fetching them is
 *   refused there); its results are the same.
 */
(function () {
  "use strict";

  // ---- MathJax in steps ------------------------------------------------------------------
  // (book.js runs before the deferred MathJax bundle, which reads this configuration)
  const STEP = 10; // formulas found per step
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
  function typesetInSteps() {
    const MathJax = window.MathJax;
    const waiting = [...document.querySelectorAll(".math")].filter((e) => !e.querySelector("mjx-container"));
    let done = nextTask();
    for (let i = 0; i < waiting.length; i += STEP) {
      const step = waiting.slice(i, i + STEP);
      done = done.then(() => MathJax.typesetPromise(step)).then(nextTask);
    }
    // then the whole page, as MathJax would have read it (anything outside those boxes)
    return done.then(() => MathJax.typesetPromise([document.body]));
  }
  if (window.MathJax && !window.MathJax.version) {
    const startup = (window.MathJax.startup = window.MathJax.startup || {});
    if (!startup.pageReady) startup.pageReady = typesetInSteps;
  }

  // ---- data of the interactive pages -----------------------------------------------------
  const pending = new Map();
  self.bookData = self.bookData || {};
  self.loadBookData = function (url) {
    const address = new URL(url, document.baseURI);
    const match = /\/_static\/(.+\.json)$/.exec(address.pathname);
    if (!match) return Promise.reject(new Error(`not a data file in _static: ${url}`));
    const key = decodeURIComponent(match[1]);
    if (key in self.bookData) return Promise.resolve(self.bookData[key]);
    if (!pending.has(key)) {
      pending.set(
        key,
        new Promise((resolve, reject) => {
          const script = document.createElement("script");
          script.async = true;
          script.src = address.href.replace(/\.json$/, ".js");
          script.onload = () =>
            key in self.bookData
              ? resolve(self.bookData[key])
              : reject(new Error(`${script.src} holds no data for ${key}`));
          script.onerror = () => {
            pending.delete(key);
            reject(new Error(`could not load ${key}`));
          };
          document.head.append(script);
        })
      );
    }
    return pending.get(key);
  };

  // ---- drawers close after a tap on one of their links ------------------------------------
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("dialog a[href]");
    if (!link) return;
    const drawer = link.closest("dialog");
    if (drawer && drawer.open && drawer.id !== "pst-search-dialog") drawer.close();
  });

  // ---- links inside the title of a collapsible box ----------------------------------------
  document.addEventListener(
    "click",
    (event) => {
      const link = event.target.closest && event.target.closest(".toggle > .admonition-title a[href]");
      if (link) event.stopPropagation(); // the link's own navigation still happens
    },
    true
  );

  // ---- boxes that scroll sideways --------------------------------------------------------
  const SCROLLERS = [
    "span.math",
    ".pst-scrollable-table-container",
    'div.math > mjx-container[display="true"]',
    ".bd-article table",
    ".bd-article pre",
    ".bd-article a.image-reference",
    ".book-table-scroll",
  ].join(", ");

  function contentWidth(el) {
    const cs = getComputedStyle(el);
    return el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  }

  function isWide(el) {
    if (el.matches("span.math")) {
      const math = el.querySelector("mjx-container");
      if (!math) return false;
      const block = el.parentElement.closest("p, li, dd, dt, td, th, h1, h2, h3, h4, h5, h6, figcaption, caption, div");
      return !!block && math.getBoundingClientRect().width > contentWidth(block) + 0.5;
    }
    if (el.matches("mjx-container")) {
      const math = el.firstElementChild;
      return !!math && math.getBoundingClientRect().width > el.clientWidth + 0.5;
    }
    return el.scrollWidth > el.clientWidth + 1;
  }

  // measured for a whole batch first, then changed: a change between two measurements would
  // make the browser lay the page out again for each box
  function measure(el) {
    if (!el.getClientRects().length) return null; // not shown (a closed drawer, a folded cell)
    return isWide(el);
  }

  function mark(el, wide) {
    if (wide === null) return;
    el.classList.toggle("book-scroll", wide);
    // (the theme gives boxes that do not overflow tabindex="-1", and revises it 300 ms after a
    // resize: a box that has become wide takes the focus now)
    if (wide && el.tabIndex < 0 && el.tagName !== "A") {
      el.setAttribute("tabindex", "0");
      el.dataset.bookTab = "";
    } else if (!wide && "bookTab" in el.dataset) {
      el.removeAttribute("tabindex");
      delete el.dataset.bookTab;
    }
  }

  const queued = new Set();
  let frame = 0;
  function queue(els) {
    for (const el of els) queued.add(el);
    if (!frame)
      frame = requestAnimationFrame(() => {
        frame = 0;
        const batch = [...queued];
        queued.clear();
        const wide = batch.map(measure);
        batch.forEach((el, i) => mark(el, wide[i]));
      });
  }
  self.bookMarkScrollers = () => queue(document.querySelectorAll(SCROLLERS));

  document.addEventListener("DOMContentLoaded", () => {
    const article = document.querySelector(".bd-article") || document.body;
    // MathJax replaces each formula's text with its typeset form, when it comes near the screen
    new MutationObserver((records) => {
      const els = new Set();
      for (const r of records)
        for (const node of r.addedNodes)
          // (not the empty box that stands for a formula until it comes near the screen)
          if (node.nodeName === "MJX-CONTAINER" && !(node.firstChild && node.firstChild.nodeName === "MJX-LAZY")) {
            const box = node.matches('[display="true"]') ? node : node.closest("span.math");
            if (box) els.add(box);
            // the typeset formula may have widened the table or output around it
            const outer = node.parentElement && node.parentElement.closest(SCROLLERS);
            if (outer) els.add(outer);
          }
      if (els.size) queue(els);
      // a display equation typeset while the page is being printed is fitted to the column too
      if (els.size && printing.matches) fitEquations([...els].filter((e) => e.matches('[display="true"]')));
    }).observe(article, { childList: true, subtree: true });
    self.bookMarkScrollers();
  });
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(self.bookMarkScrollers, 100);
  });
  window.addEventListener("load", self.bookMarkScrollers);

  // ---- print: wide display equations shrink to the column --------------------------------
  const fitted = [];
  function fitEquations(boxes) {
    const all = Array.isArray(boxes) ? boxes : document.querySelectorAll('mjx-container[display="true"]');
    for (const box of all) {
      const math = box.firstElementChild;
      if (!math) continue;
      box.style.removeProperty("zoom");
      const room = box.clientWidth;
      const need = math.getBoundingClientRect().width;
      if (room > 0 && need > room + 0.5) {
        box.style.zoom = String(Math.max(0.5, Math.floor((100 * room) / need) / 100));
        fitted.push(box);
      }
    }
  }
  function unfitEquations() {
    while (fitted.length) fitted.pop().style.removeProperty("zoom");
  }
  // pictures that load lazily are loaded for printing
  window.addEventListener("beforeprint", () => {
    for (const img of document.querySelectorAll('img[loading="lazy"]')) img.loading = "eager";
  });
  const printing = window.matchMedia("print");
  printing.addEventListener("change", (e) => (e.matches ? fitEquations() : unfitEquations()));
  window.addEventListener("beforeprint", fitEquations);
  window.addEventListener("afterprint", unfitEquations);

  // ---- MathJax on demand --------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", () => {
    const spec = document.getElementById("book-mathjax");
    if (!spec || window.MathJax) return;
    const { src, config } = JSON.parse(spec.textContent);
    const formulas = document.querySelectorAll(".math");
    const seen = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      seen.disconnect();
      window.MathJax = config;
      const script = document.createElement("script");
      script.async = true;
      script.src = new URL(src, document.baseURI).href;
      document.head.append(script);
    });
    formulas.forEach((f) => seen.observe(f));
  });

  // ---- search from the file system ---------------------------------------------------------
  if (location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined")
    DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
})();
