/* Typeset formulas ahead of time with the website's own copy of MathJax 3 (run by
 * site_theme/book_site_math.py while the site is written; plain Node, no packages of its own).
 *
 * stdin:  {"mathjax": "<folder of MathJax's es5 files>", "scale": 1.237, "fontURL": "...",
 *          "packages": [...], "formulas": [["<TeX>", true|false (display)], ...]}
 * stdout: {"html": ["<mjx-container …>" or null (MathJax reported an error), ...],
 *          "css": "<the CommonHTML style sheet of every character used>"}
 *
 * The output is what MathJax writes in the browser: CommonHTML with the same font and scale,
 * and the hidden MathML that screen readers read.
 */
"use strict";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  require(`${job.mathjax}/node-main.js`)
    .init({
      loader: {
        load: ["input/tex-base", ...job.packages.map((p) => `[tex]/${p}`), "output/chtml", "adaptors/liteDOM", "a11y/assistive-mml"],
      },
      tex: { packages: ["base", ...job.packages] },
      chtml: { fontURL: job.fontURL, scale: job.scale, matchFontHeight: false },
    })
    .then((MathJax) => {
      const adaptor = MathJax.startup.adaptor;
      // one after the other: a formula may load a TeX package (autoload), as in the browser
      const html = [];
      let chain = Promise.resolve();
      for (const [tex, display] of job.formulas)
        chain = chain
          .then(() => MathJax.tex2chtmlPromise(tex, { display }))
          .then((node) => {
            const text = adaptor.outerHTML(node);
            html.push(text.includes("mjx-merror") || text.includes("data-mjx-error") ? null : text);
          })
          .catch(() => html.push(null));
      return chain.then(() => {
        const css = adaptor.textContent(MathJax.chtmlStylesheet());
        process.stdout.write(JSON.stringify({ html, css }));
      });
    })
    .catch((err) => {
      process.stderr.write(String((err && err.stack) || err));
      process.exit(1);
    });
});
