/* The atlas of dimensions: pick an architecture, read what lsa_lib computed for it.
 *
 * Plain JavaScript; the data is read with loadBookData (book.js), which also works when the
 * site is opened from the file system. The data (written by tools/make_atlas.py) sits next
 * to this file in _static/atlas/: index.json, then one file per depth and first widths,
 * loaded only when the reader picks such an architecture. The chosen architecture is kept
 * in the page address (#w=3,2,2&a=2,1), so that a link can open the atlas on a case.
 */
(function () {
  "use strict";

  const root = document.getElementById("atlas");
  if (!root) return;
  const dataUrl = root.dataset.src || "../_static/atlas/";
  const files = new Map(); // file name -> Promise of its rows
  let index = null;
  // label -> address from the site's root (written by the site at build time); the page links
  // the book by label, so that its links follow text that moves between pages
  let labels = {};
  const rootUrl = dataUrl.replace(/_static\/atlas\/?$/, "");
  const state = { widths: [3, 3, 3], attn: [2, 2] };

  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  };
  const fmtGap = (g) => (g === null || g === undefined ? "" : Number(g).toExponential(1).replace("e+", "e"));
  const tuple = (xs) => "(" + xs.join(", ") + (xs.length === 1 ? "," : "") + ")";

  function fileName(widths) {
    const depth = widths.length - 1;
    return `l${depth}-${widths.slice(0, index.split[String(depth)]).join("-")}.json`;
  }

  // the library's sentences are stored as [template number, "its numbers"] (see make_atlas.py)
  function decode(code) {
    const [number, args] = code;
    const values = args ? args.split(",") : [];
    const pieces = index.templates[number].split("#");
    return pieces.map((p, i) => p + (i < values.length ? values[i] : "")).join("");
  }

  function load(name) {
    if (!files.has(name)) files.set(name, self.loadBookData(dataUrl + name));
    return files.get(name);
  }

  // ---- controls -------------------------------------------------------------------------
  const controls = el("div", { class: "atlas-controls" });
  const depthSel = el("select", { id: "atlas-depth", "aria-label": "depth (number of layers)" });
  const sizeBox = el("div", { class: "atlas-sizes" });
  const result = el("div", { class: "atlas-result", id: "atlas-result", "aria-live": "polite" });
  controls.append(el("label", { for: "atlas-depth", text: "Layers l " }), depthSel, sizeBox);
  root.replaceChildren(controls, result);

  function sizeSelect(id, label, value, max) {
    const sel = el("select", { id, "aria-label": label });
    for (let v = 1; v <= max; v++) sel.append(el("option", { value: String(v), text: String(v) }));
    sel.value = String(Math.min(value, max));
    sel.addEventListener("change", () => {
      const [kind, i] = id.replace("atlas-", "").split("-");
      (kind === "d" ? state.widths : state.attn)[Number(i) - (kind === "d" ? 0 : 1)] = Number(sel.value);
      update(true);
    });
    return el("label", { class: "atlas-size" }, el("span", { class: "atlas-size-name" }, label), sel);
  }

  function buildSizes() {
    const depth = state.attn.length;
    const max = index.grid[String(depth)];
    state.widths = state.widths.map((v) => Math.min(v, max));
    state.attn = state.attn.map((v) => Math.min(v, max));
    const row = (name, values, offset, kind) =>
      el(
        "div",
        { class: "atlas-row" },
        el("span", { class: "atlas-row-name", text: name }),
        ...values.map((v, k) => sizeSelect(`atlas-${kind}-${k + offset}`, `${kind}${sub(k + offset)}`, v, max))
      );
    sizeBox.replaceChildren(
      row("widths", state.widths, 0, "d"),
      row("attention dims", state.attn, 1, "a")
    );
  }

  function sub(n) {
    return String(n).replace(/\d/g, (c) => "₀₁₂₃₄₅₆₇₈₉"[Number(c)]);
  }

  function setDepth(depth) {
    const max = index.grid[String(depth)];
    const w = state.widths.slice(0, depth + 1);
    while (w.length < depth + 1) w.push(w[w.length - 1]);
    const a = state.attn.slice(0, depth);
    while (a.length < depth) a.push(Math.min(2, max));
    state.widths = w;
    state.attn = a;
  }

  depthSel.addEventListener("change", () => {
    setDepth(Number(depthSel.value));
    buildSizes();
    update(true);
  });

  // ---- the address --------------------------------------------------------------------
  function readHash() {
    const m = /w=([\d,]+)&a=([\d,]+)/.exec(location.hash);
    if (!m) return false;
    const w = m[1].split(",").map(Number);
    const a = m[2].split(",").map(Number);
    const max = index.grid[String(a.length)];
    if (!max || w.length !== a.length + 1 || [...w, ...a].some((x) => !(x >= 1 && x <= max))) return false;
    state.widths = w;
    state.attn = a;
    return true;
  }

  // ---- the result ---------------------------------------------------------------------
  function row(name, id, ...content) {
    return el("tr", {}, el("th", { scope: "row", text: name }), el("td", { id }, ...content));
  }
  const num = (id, value) => el("output", { id, class: "atlas-num" }, String(value));
  // Certified bounds: the value where they meet (id prefix-certified), else both
  // (prefix-lower, prefix-upper); text.met / text.open follow, after optional leads.
  function bounds(prefix, lower, upper, text) {
    if (lower === upper)
      return [text.metLead || "", num(`${prefix}-certified`, lower), el("span", { class: "atlas-ok", text: text.met })];
    return [
      (text.openLead || "") + "between ",
      num(`${prefix}-lower`, lower),
      " and ",
      num(`${prefix}-upper`, upper),
      el("span", { class: "atlas-warn", text: text.open }),
    ];
  }

  // a link to the box or section with this label (plain text if the site has no such label)
  function labelLink(label, text, id, title) {
    const attrs = { ...(id ? { id } : {}), ...(title ? { title } : {}) };
    if (!labels[label]) return el("span", { ...attrs, text });
    return el("a", { ...attrs, href: rootUrl + labels[label], text });
  }
  const link = (key, id) => labelLink(index.links[key][0], index.links[key][1], id);
  // "a, b and c" from nodes
  function listOf(nodes) {
    const out = [];
    nodes.forEach((n, i) => {
      if (i > 0) out.push(i === nodes.length - 1 ? " and " : ", ");
      out.push(n);
    });
    return out;
  }
  function ruleLinks(indices) {
    return listOf(
      indices.map((k) => {
        const rule = index.rules[k];
        const words = rule.status ? ` (${rule.status})` : "";
        return el("span", {}, "the rule ", labelLink(rule.label, `“${rule.name}”`, null, rule.statement), words);
      })
    );
  }
  function familyLinks(indices) {
    return listOf(indices.map((k) => labelLink(index.families[k].label, index.families[k].text)));
  }
  // How a certified or open pair of bounds is known, in words, with its links.
  function howKnown(id, lower, upper, families, rules, softmax, shown) {
    const box = el("div", { class: "atlas-note", id });
    if (lower === upper) {
      box.append(
        "Known by the certificate: its lower bound (",
        softmax ? "a Jacobian minor proven non-zero in ball arithmetic" : "an exact rank modulo a prime",
        ") meets its upper bound, P minus the rank of the known fiber directions: ",
        softmax ? "the symmetries that survive the softmax" : "the three symmetries",
        ...(families.length ? [", and ", ...familyLinks(families)] : [" (no further family was needed)"]),
        " (",
        link(softmax ? "ball" : "certificate"),
        "). "
      );
      if (rules.length && shown)  // the rules are listed just above: not a second time
        box.append(rules.length > 1 ? "The rules named above give the same value on their stated domains." : "The rule named above gives the same value on its stated domain.");
      else if (rules.length)
        box.append("The same value is given by ", ...ruleLinks(rules), rules.length > 1 ? " on their stated domains." : " on its stated domain.");
      else box.append("No rule of the book covers this architecture: the certificate alone gives its dimension.");
    } else {
      box.append(
        "Open: the certified bounds do not meet. The upper bound uses the ",
        softmax ? "symmetries that survive the softmax" : "three symmetries",
        ...(families.length ? [" and ", ...familyLinks(families)] : []),
        ". "
      );
    }
    return box;
  }

  function render(key, r) {
    const c = Object.fromEntries(index.columns.map((name, i) => [name, r[i]]));
    c.failed = c.failed.map(decode);
    c.softmax_failed = c.softmax_failed.map(decode);
    const depth = state.attn.length;
    const rows = [];
    rows.push(
      row(
        "Architecture",
        "atlas-arch",
        `widths ${tuple(state.widths)}, attention dimensions ${tuple(state.attn)}, t = ${index.t} tokens`
      )
    );
    rows.push(row("Parameters P", "atlas-params", num("atlas-P", c.P)));

    const formula = el("div");
    if (c.formula !== null) {
      formula.append(num("atlas-formula", c.formula), " — ", ...ruleLinks(c.rules), ".");
    } else {
      formula.append(
        el("span", { class: "atlas-fails", text: "The general-width formula does not apply: a hypothesis fails." }),
        el("ul", { id: "atlas-failed" }, ...c.failed.map((f) => el("li", { text: f }))),
        el("span", {}, "Its right-hand side would give ", num("atlas-rhs", c.formula_rhs), " (", link("hypotheses"), ").")
      );
    }
    rows.push(row("Dimension formula", "atlas-formula-cell", formula));

    const cert = el("div");
    cert.append(
      ...bounds("atlas", c.lower, c.upper, {
        met: ` certified: lower bound ${c.lower} = upper bound ${c.upper} (exact ranks modulo a prime)`,
        open: " (the certified bounds do not meet)",
      })
    );
    if (c.lower === c.upper) {
      const rhs = c.formula !== null ? c.formula : c.formula_rhs;
      const note =
        rhs === c.lower
          ? c.formula !== null
            ? "The formula's value is the certified dimension."
            : "Here the formula's right-hand side happens to be right anyway."
          : `The formula's right-hand side over-counts by ${rhs - c.lower}.`;
      cert.append(el("div", { class: "atlas-note", id: "atlas-agreement", text: note }));
      cert.append(
        el("div", { class: "atlas-note" }, "Redundancy: a generic fiber has dimension P − dim = ", num("atlas-fiber", c.P - c.lower), ".")
      );
    }
    cert.append(howKnown("atlas-known", c.lower, c.upper, c.families, c.rules, false, c.formula !== null));
    rows.push(row("Certified dimension (lightning)", "atlas-certified-cell", cert));

    const sm = el("div");
    if (c.softmax_formula !== null) {
      sm.append("Formula (one more per layer): ", num("atlas-softmax-formula", c.softmax_formula));
      sm.append(...(c.softmax_rules.length ? [" — ", ...ruleLinks(c.softmax_rules)] : []), ".");
    } else {
      sm.append(el("span", { text: "The formula plus l does not apply: " + c.softmax_failed.join("; ") + "." }));
    }
    sm.append(el("br"));
    if (c.softmax_lower !== null && c.softmax_lower !== undefined) {
      sm.append(
        ...bounds("atlas-softmax", c.softmax_lower, c.softmax_upper, {
          metLead: "Dimension: ",
          met: " certified: lower bound = upper bound.",
          openLead: "Certified: ",
          open: " (the bounds do not meet).",
        })
      );
      sm.append(howKnown("atlas-softmax-known", c.softmax_lower, c.softmax_upper, c.softmax_families || [], c.softmax_rules, true, c.softmax_formula !== null));
      if (c.softmax_open)
        sm.lastChild.append(index.open_reasons[c.softmax_open], " (", link("softmax-open"), ")");
      if (c.softmax_formula !== null && c.softmax_lower === c.softmax_upper && c.softmax_formula !== c.softmax_lower)
        sm.append(
          el("div", {
            class: "atlas-note atlas-warn",
            id: "atlas-softmax-cert-differs",
            text: "The certified dimension differs from the formula's value.",
          })
        );
      sm.append(el("br"));
    }
    if (c.softmax_rank !== null && c.softmax_rank !== undefined) {
      sm.append(
        "Float64 estimate: ",
        num("atlas-softmax-rank", c.softmax_rank),
        ` (singular-value gap ${fmtGap(c.softmax_gap)}, ${c.softmax_points > 1 ? `best of ${c.softmax_points} points` : "at the certificate's point"}).`
      );
      if (c.softmax_formula !== null && c.softmax_formula !== c.softmax_rank)
        sm.append(
          el("div", {
            class: "atlas-note atlas-warn",
            id: "atlas-softmax-differs",
            text: "The estimate differs from the formula's value: a float rank is evidence, not a proof, but its gap is clear here.",
          })
        );
    } else if (c.softmax_gap !== null && c.softmax_gap !== undefined) {
      sm.append(`Float64 estimate: no clear gap in the singular values (largest ${fmtGap(c.softmax_gap)}); no rank is read.`);
    } else {
      sm.append("Float64 estimate: not computed for this depth.");
    }
    rows.push(row("Softmax network", "atlas-softmax-cell", sm));

    const main = c.rules.length ? index.rules[c.rules[0]] : null;
    const links = el(
      "div",
      {},
      main ? labelLink(main.label, `the rule “${main.name}”`, "atlas-chapter") : link("hypotheses", "atlas-chapter"),
      " · ",
      link("certificate"),
      " · ",
      link("atlas")
    );
    if (depth >= 2) links.append(" · softmax: ", link("softmax"));
    rows.push(row("Explained in", "atlas-chapter-cell", links));

    result.replaceChildren(el("table", { class: "atlas-table", "data-key": key }, el("tbody", {}, ...rows)));
  }

  // the certified entries per depth, under the page's explanation (from the index)
  function renderCounts() {
    const box = document.getElementById("atlas-counts");
    if (!box || !index.counts) return;
    const head = el("tr", {}, ...["Layers", "Entries", "Lightning certified", "Softmax certified"].map((t) => el("th", { scope: "col", text: t })));
    const body = Object.entries(index.counts).map(([depth, c]) =>
      el("tr", {}, ...[depth, c.entries, c.lightning, c.softmax].map((v) => el("td", { text: String(v) })))
    );
    const caption = el("caption", { text: "Certified entries per depth" });
    box.replaceChildren(el("table", { class: "atlas-counts-table" }, caption, el("thead", {}, head), el("tbody", {}, ...body)));
  }

  let serial = 0;
  async function update(pushHash) {
    const key = state.widths.join(",") + "|" + state.attn.join(",");
    if (pushHash) history.replaceState(null, "", `#w=${state.widths.join(",")}&a=${state.attn.join(",")}`);
    const mine = ++serial;
    result.setAttribute("aria-busy", "true");
    try {
      const rows = await load(fileName(state.widths));
      if (mine !== serial) return;
      const r = rows[key];
      if (!r) throw new Error(`no entry for ${key}`);
      render(key, r);
    } catch (err) {
      if (mine !== serial) return;
      result.replaceChildren(el("p", { class: "atlas-error", text: `Could not load the data: ${err.message}` }));
    } finally {
      if (mine === serial) result.removeAttribute("aria-busy");
    }
  }

  const labelMap = self.loadBookData(rootUrl + "_static/labels.json").catch(() => ({}));
  Promise.all([load("index.json"), labelMap])
    .then(([idx, map]) => {
      index = idx;
      labels = map;
      renderCounts();
      for (const d of Object.keys(index.grid))
        depthSel.append(el("option", { value: d, text: `${d} (sizes 1–${index.grid[d]})` }));
      readHash();
      depthSel.value = String(state.attn.length);
      buildSizes();
      update(false);
      window.addEventListener("hashchange", () => {
        if (readHash()) {
          depthSel.value = String(state.attn.length);
          buildSizes();
          update(false);
        }
      });
    })
    .catch((err) => {
      result.replaceChildren(el("p", { class: "atlas-error", text: `Could not load the atlas: ${err.message}` }));
    });
})();
