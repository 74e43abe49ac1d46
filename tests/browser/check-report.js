// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// check-report.js -- opens a report.html from file:// in Debian's chromium (playwright-core, no
// downloaded browser), drives it, and prints one JSON object of what it saw; tests/sections/browser.py
// holds the expectations (the truths the workload and the host know).
//
//   node check-report.js PAGE.html OUT.png SPEC.json
//
// SPEC: {"mode": "lambda", "big_id": ID, "diff_ids": [ID, ID]} or {"mode": "chart"}.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

async function main() {
  const [page_path, png, spec_path] = process.argv.slice(2);
  const spec = JSON.parse(fs.readFileSync(spec_path, "utf8"));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "pt-chromium-"));
  const out = { console_errors: [], page_errors: [], requests: [] };
  // A new, empty profile (playwright's way of passing --user-data-dir).
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium", headless: true, viewport: { width: 1280, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    page.on("console", (m) => { if (m.type() === "error") out.console_errors.push(m.text()); });
    page.on("pageerror", (e) => out.page_errors.push(String(e)));
    // Every request: file: and data: are the page itself; anything else is network.
    page.on("request", (r) => {
      const u = r.url();
      if (!u.startsWith("file:") && !u.startsWith("data:")) out.requests.push(u);
    });
    await page.goto("file://" + path.resolve(page_path), { waitUntil: "load" });
    out.title = await page.title();
    out.summary = await page.locator("#summary").innerText();
    if (spec.mode === "chart") {
      out.chart_bands = await page.locator("#chart-svg rect.band").count();
      out.chart_paths = await page.locator("#chart-svg path").evaluateAll((ps) => ps.map((p) => p.getAttribute("class")));
      out.chart_note = await page.locator("#chart-note").innerText().catch(() => "");
      out.chart_none = await page.locator("#chart-none").innerText().catch(() => "");
      // The Lambda line's last point, in the chart's own y (compared with the RSS line's highest point).
      out.hwm_last_y = await page.evaluate(() => {
        const d = document.querySelector("#chart-svg path.l-hwm").getAttribute("d").trim().split(/[ML ]+/).filter(Boolean);
        return parseFloat(d[d.length - 1]);
      });
      out.rss_min_y = await page.evaluate(() => {
        const d = document.querySelector("#chart-svg path.l-rss").getAttribute("d").trim().split(/[ML ]+/).filter(Boolean);
        let m = Infinity; for (let i = 1; i < d.length; i += 2) m = Math.min(m, parseFloat(d[i])); return m;
      });
      await page.screenshot({ path: png, fullPage: true });
      return out;
    }
    out.table_ids = await page.locator("#inv-table tbody tr").evaluateAll((trs) => trs.map((t) => t.getAttribute("data-id")));
    out.chart_note = await page.locator("#chart-note").innerText().catch(() => "");
    out.chart_none = await page.locator("#chart-none").innerText().catch(() => "");
    // Sorting: click "RSS peak" (descending first): the first row is then the biggest.
    await page.locator("#inv-table th[data-col=rss_peak]").click();
    out.sorted_first = await page.locator("#inv-table tbody tr").first().getAttribute("data-id");
    await page.locator("#inv-table th[data-col=seq]").click();
    // The big invocation's own flame graph.
    await page.locator('#inv-table tbody tr[data-id="' + spec.big_id + '"] td:nth-child(3)').click();
    out.flame_title = await page.locator("#flame-title").innerText();
    const frames = () => page.locator('.flame[data-flame="main"] .fr').evaluateAll((ds) => ds.map((d) => d.getAttribute("data-frame")));
    out.inv_frames = await frames();
    // Search: a Python function name; the matched share is printed.
    await page.locator("#search").fill(spec.search);
    out.search_hits = await page.locator('.flame[data-flame="main"] .fr.match').count();
    out.search_status = await page.locator('.flame[data-flame="main"] ~ .fstatus').first().innerText();
    out.search_matched = Number(await page.locator('.flame[data-flame="main"] ~ .fstatus').first().getAttribute("data-matched"));
    await page.screenshot({ path: png, fullPage: true });
    await page.locator("#search").fill("");
    // Click-to-zoom on the handler's frame: it then spans the whole width.
    await page.locator('.flame[data-flame="main"] .fr:not(.anc)[data-frame^="function:handler"]').first().click();
    out.zoom_status = await page.locator('.flame[data-flame="main"] ~ .fstatus').first().innerText();
    out.zoom_width = await page.locator('.flame[data-flame="main"] .fr:not(.anc)[data-frame^="function:handler"]').first()
      .evaluate((d) => d.getBoundingClientRect().width / d.parentNode.getBoundingClientRect().width);
    await page.locator('.flame[data-flame="main"] .fr.anc').first().click();
    // Python/JS frames only.
    await page.locator("#pyonly").check();
    out.py_frames = await frames();
    out.py_kinds = await page.evaluate(() => {
      const D = JSON.parse(document.getElementById("pt-data").textContent);
      const byLabel = {};
      D.frames.forEach((f) => { (byLabel[f[0]] = byLabel[f[0]] || new Set()).add(D.kinds[f[1]]); });
      return Object.fromEntries(Object.entries(byLabel).map(([k, v]) => [k, Array.from(v)]));
    });
    await page.locator("#pyonly").uncheck();
    // Diff of two invocations.
    for (const id of spec.diff_ids)
      await page.locator('#inv-table tbody tr[data-id="' + id + '"] input.diffpick').check();
    out.diff_note = await page.locator("#diff-note").innerText();
    out.diff_bars = await page.locator('.flame[data-flame="diff"] .fr').count();
    out.diff_rows = await page.locator("#diff-table tr.grew, #diff-table tr.shrank").evaluateAll((trs) => trs.map((t) => [t.className, t.children[0].textContent]));
    out.diff_colours = await page.locator('.flame[data-flame="diff"] .fr').evaluateAll((ds) => ds.map((d) => d.style.background));
    await page.locator("#diff").screenshot({ path: png.replace(/\.png$/, "-diff.png") });
    return out;
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then((o) => { console.log(JSON.stringify(o)); },
            (e) => { console.log(JSON.stringify({ fatal: String(e && e.stack || e) })); process.exit(2); });
