/* A rotatable view of the Whitney umbrella slice (Figure 1), drawn on a canvas.
 *
 * Plain JavaScript, no dependency. The surface grid and the singular curve were computed by
 * lsa_lib.singularities.umbrella_slice (tools/make_umbrella.py) and are read from
 * _static/umbrella/umbrella.json with loadBookData (book.js), which also works when the site
 * is opened from the file system. Drag the picture (mouse or finger), use the arrow keys when
 * it has the focus, or the two sliders; "Reset" returns to the view of the static figure.
 */
(function () {
  "use strict";

  const root = document.getElementById("umbrella");
  if (!root) return;
  const src = root.dataset.src || "../_static/umbrella/umbrella.json";
  const VIEW = { elev: 24, azim: -35 }; // the static figure's view
  const BLUE = [0, 114, 178];
  const GOLD = "#FFD700";

  const canvas = document.createElement("canvas");
  canvas.id = "umbrella-canvas";
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  canvas.setAttribute(
    "aria-label",
    "Rotatable surface: the slice of the quartic M_{2,1,2}, a Whitney umbrella, with its singular line in gold"
  );
  const panel = document.createElement("div");
  panel.className = "umbrella-controls";
  const slider = (id, label, min, max, value) => {
    const wrap = document.createElement("label");
    wrap.textContent = label + " ";
    const input = document.createElement("input");
    Object.assign(input, { type: "range", id, min, max, step: 1, value });
    const out = document.createElement("output");
    out.id = id + "-value";
    out.textContent = value + "°";
    wrap.append(input, " ", out);
    return [wrap, input, out];
  };
  const [azWrap, azInput, azOut] = slider("umbrella-azim", "azimuth", -180, 180, VIEW.azim);
  const [elWrap, elInput, elOut] = slider("umbrella-elev", "elevation", -90, 90, VIEW.elev);
  const reset = document.createElement("button");
  reset.type = "button";
  reset.textContent = "Reset view";
  reset.className = "umbrella-reset";
  panel.append(azWrap, elWrap, reset);
  root.replaceChildren(canvas, panel);

  let data = null;
  const view = { ...VIEW };

  function setView(elev, azim) {
    view.elev = Math.max(-90, Math.min(90, elev));
    view.azim = ((((azim + 180) % 360) + 360) % 360) - 180;
    azInput.value = Math.round(view.azim);
    elInput.value = Math.round(view.elev);
    azOut.textContent = Math.round(view.azim) + "°";
    elOut.textContent = Math.round(view.elev) + "°";
    draw();
  }

  // world (u, v, s) -> [screen x, screen y (up), depth (towards the viewer)]
  function project(p) {
    const a = (view.azim * Math.PI) / 180;
    const e = (view.elev * Math.PI) / 180;
    const x = p[0] * Math.cos(a) + p[1] * Math.sin(a);
    const y = -p[0] * Math.sin(a) + p[1] * Math.cos(a);
    // the viewer looks from azimuth a towards the origin (as matplotlib's view_init)
    return [y, p[2] * Math.cos(e) - x * Math.sin(e), p[2] * Math.sin(e) + x * Math.cos(e)];
  }

  function draw() {
    if (!data) return;
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(200, Math.min(root.clientWidth || 600, 720));
    const height = Math.round(width * 0.8);
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      canvas.style.width = width + "px";
      canvas.style.height = height + "px";
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, width, height);
    const scale = Math.min(width, height) / 4.0;
    const toScreen = (q) => [width / 2 + q[0] * scale, height / 2 - q[1] * scale];
    const light = [0.35, 0.55, 0.76]; // in view coordinates (x right, y up, z towards viewer)

    // the box and the axes
    const corners = [];
    for (const x of [-1, 1]) for (const y of [-1, 1]) for (const z of [-1, 1]) corners.push([x, y, z]);
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#cccccc";
    for (let i = 0; i < 8; i++)
      for (let j = i + 1; j < 8; j++) {
        const d = corners[i].reduce((n, c, k) => n + (c !== corners[j][k]), 0);
        if (d !== 1) continue;
        const [a, b] = [toScreen(project(corners[i])), toScreen(project(corners[j]))];
        ctx.beginPath();
        ctx.moveTo(...a);
        ctx.lineTo(...b);
        ctx.stroke();
      }
    // the surface: quadrilaterals sorted far to near, Lambert-shaded on both sides
    const { u, v, s } = data.surface;
    const n = u.length;
    const m = u[0].length;
    const P = [];
    for (let i = 0; i < n; i++) {
      P.push([]);
      for (let j = 0; j < m; j++) P[i].push(project([u[i][j], v[i][j], s[i][j]]));
    }
    const quads = [];
    for (let i = 0; i + 1 < n; i++)
      for (let j = 0; j + 1 < m; j++) {
        const q = [P[i][j], P[i + 1][j], P[i + 1][j + 1], P[i][j + 1]];
        const d1 = [q[2][0] - q[0][0], q[2][1] - q[0][1], q[2][2] - q[0][2]];
        const d2 = [q[3][0] - q[1][0], q[3][1] - q[1][1], q[3][2] - q[1][2]];
        const nx = d1[1] * d2[2] - d1[2] * d2[1];
        const ny = d1[2] * d2[0] - d1[0] * d2[2];
        const nz = d1[0] * d2[1] - d1[1] * d2[0];
        const len = Math.hypot(nx, ny, nz) || 1;
        const shade = Math.abs((nx * light[0] + ny * light[1] + nz * light[2]) / len);
        quads.push([(q[0][2] + q[1][2] + q[2][2] + q[3][2]) / 4, q, shade]);
      }
    quads.sort((a, b) => a[0] - b[0]);
    ctx.lineWidth = 0.4;
    ctx.strokeStyle = "rgba(26, 60, 90, 0.55)";
    for (const [, q, shade] of quads) {
      const k = 0.45 + 0.55 * shade;
      ctx.fillStyle = `rgba(${BLUE.map((c) => Math.round(c * k + 255 * (1 - k) * 0.35)).join(",")},0.82)`;
      ctx.beginPath();
      ctx.moveTo(...toScreen(q[0]));
      for (let k2 = 1; k2 < 4; k2++) ctx.lineTo(...toScreen(q[k2]));
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }

    // the singular line (in M) and its continuation off M, drawn on top as in the figure
    const line = (pts, style, width, dash) => {
      if (!pts.length) return;
      ctx.save();
      ctx.strokeStyle = style;
      ctx.lineWidth = width;
      ctx.setLineDash(dash);
      ctx.beginPath();
      pts.forEach((p, k) => (k ? ctx.lineTo : ctx.moveTo).apply(ctx, toScreen(project(p))));
      ctx.stroke();
      ctx.restore();
    };
    line(data.singular_not_in_m, "#555555", 2.2, [7, 5]);
    line(data.singular_in_m, "#222222", 6.5, []);
    line(data.singular_in_m, GOLD, 4.5, []);

    // axis names, drawn last (with a white halo) so that none is hidden; each sits just
    // outside the middle of a box edge along its axis, on the outline of the box: u and v on
    // the bottom edge nearest the viewer, s on the vertical edge farthest to the side
    ctx.font = "14px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
    ctx.fillStyle = "#222222";
    const placed = [];
    for (const [axis, text] of [[0, "u"], [1, "v"], [2, "s"]]) {
      const others = [0, 1, 2].filter((k) => k !== axis);
      let best = null;
      for (const a of [-1, 1])
        for (const b of [-1, 1]) {
          const p = [0, 0, 0];
          p[others[0]] = 1.22 * a;
          p[others[1]] = 1.22 * b;
          if (axis !== 2 && p[2] > 0) continue;
          const q = project(p);
          const [x, y] = toScreen(q);
          const score = axis === 2 ? Math.abs(x - width / 2) + 0.01 * q[2] : q[2];
          if (!best || score > best.score) best = { score, x, y };
        }
      const x = Math.max(10, Math.min(width - 10, best.x));
      const y = Math.max(10, Math.min(height - 10, best.y));
      ctx.strokeText(text, x, y);
      ctx.fillText(text, x, y);
      placed.push([text, Math.round(x), Math.round(y)]);
    }
    canvas.dataset.labels = JSON.stringify(placed); // where the axis names were drawn
  }

  // interaction: drag, keys, sliders
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, elev: view.elev, azim: view.azim };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    setView(drag.elev + (ev.clientY - drag.y) * 0.5, drag.azim - (ev.clientX - drag.x) * 0.5);
  });
  const stop = () => (drag = null);
  canvas.addEventListener("pointerup", stop);
  canvas.addEventListener("pointercancel", stop);
  canvas.addEventListener("keydown", (ev) => {
    const step = { ArrowLeft: [0, 5], ArrowRight: [0, -5], ArrowUp: [5, 0], ArrowDown: [-5, 0] }[ev.key];
    if (!step) return;
    ev.preventDefault();
    setView(view.elev + step[0], view.azim + step[1]);
  });
  azInput.addEventListener("input", () => setView(view.elev, Number(azInput.value)));
  elInput.addEventListener("input", () => setView(Number(elInput.value), view.azim));
  reset.addEventListener("click", () => setView(VIEW.elev, VIEW.azim));
  window.addEventListener("resize", draw);

  self
    .loadBookData(src)
    .then((d) => {
      data = d;
      root.dataset.ready = "true";
      draw();
    })
    .catch((err) => {
      const p = document.createElement("p");
      p.textContent = `The rotatable figure could not load its data (${err.message}); the static picture below shows the same surface.`;
      root.replaceChildren(p);
      root.dataset.failed = "true";
    });
})();
