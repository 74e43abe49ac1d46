// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// report.js -- draws DIR/report.html from the JSON in <script id="pt-data"> (user/report/html.c).
// No network: nothing is fetched, no font, no image. Every string from the data goes into the page
// through textContent or an attribute set by setAttribute, never as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pt-data").textContent);
  var F = D.frames;                 // [label, kind, file, line, module]
  // enum pt_frame_kind, in order: the SVG writer's hues (user/output/flamegraph.c kind_colours).
  var KIND_RGB = [[70, 195, 120, 44], [115, 165, 235, 36], [232, 200, 70, 40], [238, 112, 82, 36],
                  [190, 190, 190, 30]];
  var K_PY = 1, K_JIT = 2, K_ALLOC = 3, K_OTHER = 4;
  var ROOT = -1;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function bytes(b) {
    var a = Math.abs(b), u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (a >= 1024 && i < u.length - 1) { a /= 1024; i++; }
    return (b < 0 ? "-" : "") + (i ? a.toFixed(a < 10 ? 2 : 1) : a.toFixed(0)) + " " + u[i];
  }
  function signed(b) { return (b > 0 ? "+" : "") + bytes(b); }
  function pct(x, t) { return t ? (100 * x / t).toFixed(1) + "%" : "-"; }
  function label(fi) { return fi === ROOT ? "all" : F[fi][0]; }
  function where(fi) {
    if (fi === ROOT) return "";
    var f = F[fi];
    return f[2] ? f[2] + (f[3] ? ":" + f[3] : "") : (f[4] || "");
  }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }
  function kindColour(fi) {
    var k = fi === ROOT ? K_OTHER : (F[fi][1] < KIND_RGB.length ? F[fi][1] : K_OTHER);
    var c = KIND_RGB[k], h = hash(label(fi));
    function sh(base, byte) { return Math.max(0, Math.min(255, base + Math.floor(byte * c[3] / 255) - (c[3] >> 1))); }
    var hr = (h >> 16) & 255, hg = h & 255, hb = (h >> 8) & 255;
    if (k === K_OTHER) hg = hb = hr;
    return "rgb(" + sh(c[0], hr) + "," + sh(c[1], hg) + "," + sh(c[2], hb) + ")";
  }
  function isLang(fi) { var k = F[fi][1]; return k === K_PY || k === K_JIT; }

  // --frames python's rule (user/profile/frames.c), from the kinds: the Python/JS frames, plus the
  // native frame that allocated (the first one from the leaf that is not the allocator's).
  function langOnly(fr) {
    var first = -1, i, out = [];
    for (i = 0; i < fr.length; i++) if (isLang(fr[i])) { first = i; break; }
    if (first !== 0) {
      var n = first < 0 ? fr.length : first, pick = fr[0];
      for (i = 0; i < n; i++) if (F[fr[i]][1] !== K_ALLOC && F[fr[i]][1] !== K_OTHER) { pick = fr[i]; break; }
      out.push(pick);
    }
    for (i = Math.max(first, 0); first >= 0 && i < fr.length; i++) if (isLang(fr[i])) out.push(fr[i]);
    return out;
  }

  // The frame that "held" a stack, for sentences: its innermost Python/JS frame, else the first
  // named frame that is not the allocator's (an unnamed one labels itself "[lib.so+0x...]"),
  // else the first that is not the allocator's.
  function holder(fr) {
    var i;
    for (i = 0; i < fr.length; i++) if (isLang(fr[i])) return fr[i];
    for (i = 0; i < fr.length; i++) if (F[fr[i]][1] !== K_ALLOC && F[fr[i]][1] !== K_OTHER && label(fr[i])[0] !== "[") return fr[i];
    for (i = 0; i < fr.length; i++) if (F[fr[i]][1] !== K_ALLOC && F[fr[i]][1] !== K_OTHER) return fr[i];
    return fr.length ? fr[0] : ROOT;
  }
  // A summary holder (D.holders, D.rss_holders.stacks: [bytes, blocks or kind, lines, own]):
  // the frame a sentence names is its own-code frame, else its first frame line.
  function holderFrame(h) {
    if (h[3] >= 0) return h[2][h[3]];
    for (var i = 0; i < h[2].length; i++) if (typeof h[2][i] === "number") return h[2][i];
    return ROOT;
  }
  // The lines report.txt's first screen shows for a holder (user/output/holder.c chose them).
  function holderList(id, title, list, head) {
    var box = el("div", { id: id, "class": "holders" });
    box.appendChild(el("h3", null, title));
    var ol = el("ol");
    list.forEach(function (h) {
      var li = el("li", null, head(h)), ul = el("ul", { "class": "hframes" });
      h[2].forEach(function (x, k) {
        if (typeof x === "string") { ul.appendChild(el("li", { "class": "hskip" }, x)); return; }
        var w = where(x), it = el("li", { "class": k === h[3] ? "hown" : "" }, label(x) + (w ? "  (" + w + ")" : ""));
        ul.appendChild(it);
      });
      li.appendChild(ul);
      ol.appendChild(li);
    });
    box.appendChild(ol);
    return box;
  }
  function holderText(stacks, total) {
    if (!stacks || !stacks.length || !total) return "";
    var best = stacks[0];
    for (var i = 1; i < stacks.length; i++) if (stacks[i][0] > best[0]) best = stacks[i];
    var h = holder(best[1]), w = where(h);
    return label(h) + (w ? " (" + w + ")" : "") + " with " + bytes(best[0]) + " (" + pct(best[0], total) + ")";
  }

  // ---- a flame graph: a tree of nodes drawn as positioned divs, root at the top -----------------
  function buildTree(stacks, filter, aux) {
    var root = { f: ROOT, v: 0, a: 0, c: new Map(), p: null, d: 0 };
    stacks.forEach(function (s, si) {
      var fr = filter ? filter(s[1]) : s[1], n = root, v = s[0], a = aux ? aux[si] : 0;
      n.v += v; n.a += a;
      for (var i = fr.length - 1; i >= 0; i--) {
        var c = n.c.get(fr[i]);
        if (!c) { c = { f: fr[i], v: 0, a: 0, c: new Map(), p: n, d: n.d + 1 }; n.c.set(fr[i], c); }
        c.v += v; c.a += a; n = c;
      }
    });
    return root;
  }

  function Flame(host, name) {
    this.host = host;
    this.name = name;
    this.tip = el("div", { "class": "tip" });
    this.box = el("div", { "class": "flame", "data-flame": name });
    this.status = el("div", { "class": "fstatus" });
    host.appendChild(this.box);
    host.appendChild(this.status);
    document.body.appendChild(this.tip);
    this.query = "";
  }
  Flame.prototype.set = function (stacks, opts) {
    this.stacks = stacks;
    this.opts = opts || {};
    this.root = buildTree(stacks, this.opts.filter, this.opts.aux);
    this.zoom = this.root;
    this.draw();
  };
  Flame.prototype.colour = function (n) {
    if (!this.opts.aux) return kindColour(n.f);
    var m = this.opts.maxAbs || 1, t = Math.min(1, Math.abs(n.a) / m), c = Math.round(235 - 150 * t);
    if (n.a > 0) return "rgb(240," + c + "," + c + ")";
    if (n.a < 0) return "rgb(" + c + "," + c + ",240)";
    return "rgb(225,225,225)";
  };
  Flame.prototype.draw = function () {
    var self = this, box = this.box, z = this.zoom, total = z.v, rows = 0, hidden = 0, re = null;
    box.textContent = "";
    if (this.query) {
      try { re = new RegExp(this.query, "i"); } catch (e) { re = null; }
    }
    var matched = 0;
    function bar(n, x, w, depth, isAnc) {
      var d = el("div", { "class": "fr" + (isAnc ? " anc" : ""), "data-frame": label(n.f) });
      d.style.left = (100 * x) + "%";
      d.style.width = "calc(" + (100 * w) + "% - 1px)";
      d.style.top = (depth * 18) + "px";
      d.style.background = self.colour(n);
      d.textContent = w * box.clientWidth > 30 ? label(n.f) : "";
      var hit = re && n.f !== ROOT && re.test(label(n.f));
      if (hit) d.classList.add("match");
      d.addEventListener("click", function (ev) { ev.stopPropagation(); self.zoom = n; self.draw(); });
      d.addEventListener("mousemove", function (ev) { self.showTip(ev, n); });
      d.addEventListener("mouseleave", function () { self.tip.style.display = "none"; });
      box.appendChild(d);
      rows = Math.max(rows, depth + 1);
      return hit;
    }
    // The zoomed node's ancestors, full width above it.
    var anc = [], a = z;
    while (a) { anc.unshift(a); a = a.p; }
    anc.forEach(function (n, i) { if (i < anc.length - 1) bar(n, 0, 1, i, true); });
    var base = anc.length - 1, minw = 0.0005;
    (function walk(n, x, depth, inMatch) {
      var w = total ? n.v / total : 0;
      if (w < minw && n !== z) { hidden++; return; }
      var hit = bar(n, x, w, depth, false);
      if (hit && !inMatch) matched += n.v;
      var kids = Array.from(n.c.values()).sort(function (p, q) { return q.v - p.v || (label(p.f) < label(q.f) ? -1 : 1); });
      var cx = x;
      kids.forEach(function (c) { walk(c, cx, depth + 1, inMatch || hit); cx += total ? c.v / total : 0; });
    })(z, 0, base, false);
    box.style.height = (rows * 18 + 4) + "px";
    var s = "Total " + bytes(this.root.v) + (z !== this.root ? "; zoomed to " + label(z.f) + ": " + bytes(z.v) +
            " (" + pct(z.v, this.root.v) + "), click an upper bar to zoom out" : "; click a frame to zoom");
    if (hidden) s += "; " + hidden + " frames narrower than 0.05% not drawn";
    if (this.query) s += re ? "; matched \u201c" + this.query + "\u201d: " + bytes(matched) + " (" + pct(matched, total) + " of the view)" : "; search: not a valid pattern";
    this.status.textContent = s;
    this.status.setAttribute("data-matched", re ? String(matched) : "");
  };
  Flame.prototype.showTip = function (ev, n) {
    var t = this.tip, w = where(n.f), k = n.f === ROOT ? "" : (D.kinds[F[n.f][1]] || "");
    var s = label(n.f) + "\n" + bytes(n.v) + " (" + pct(n.v, this.root.v) + ")";
    if (this.opts.aux) s += ", change " + signed(n.a);
    if (w) s += "\n" + w;
    if (k) s += "\n" + k;
    t.textContent = s;
    t.style.display = "block";
    t.style.left = Math.min(ev.pageX + 12, window.innerWidth + window.scrollX - 360) + "px";
    t.style.top = (ev.pageY + 14) + "px";
  };
  Flame.prototype.search = function (q) { this.query = q; this.draw(); };

  function legend(host) {
    var l = el("div", { "class": "legend" });
    D.kinds.forEach(function (k, i) {
      var sw = el("span", { "class": "sw" });
      var c = KIND_RGB[Math.min(i, KIND_RGB.length - 1)];
      sw.style.background = "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
      var it = el("span", { "class": "lk" });
      it.appendChild(sw);
      it.appendChild(document.createTextNode(k));
      l.appendChild(it);
    });
    host.appendChild(l);
  }

  // ---- the page --------------------------------------------------------------------------------
  var app = document.getElementById("app");
  var invs = D.invocations || [];
  var realInvs = invs.filter(function (r) { return r.phase === "invocation"; });
  document.title = "peaktrace: " + D.comm + " (PID " + D.pid + ")";
  app.appendChild(el("h1", null, "peaktrace: " + D.comm + " (PID " + D.pid + ")"));
  app.appendChild(el("div", { "class": "sub" }, D.exe + " \u2014 traced " + (D.duration_ns / 1e9).toFixed(1) + " s, peaktrace " + D.peaktrace));

  // Summary, in sentences.
  var peakView = D.views.filter(function (v) { return v.key === "peak"; })[0];
  var sum = el("section", { id: "summary" });
  sum.appendChild(el("h2", null, "Summary"));
  var s1 = "The heap peaked at " + bytes(D.peak_bytes) + " (RSS peak " + bytes(D.rss_peak) +
           "; Lambda's Max Memory Used, the high-water mark, " + bytes(D.vmhwm) + ")";
  if (D.light)
    s1 = "Light mode (--light): no allocator probes, so there are no heap figures or heap stacks (per-allocation views; absent, not zero). The RSS peaked at " +
         bytes(D.rss_peak) + " (Lambda's Max Memory Used, the high-water mark, " + bytes(D.vmhwm) + ")";
  var ht = peakView ? holderText(peakView.stacks, peakView.total) : "";
  var H = D.holders || [];
  if (H.length && peakView && peakView.total) {
    var hf = holderFrame(H[0]), hw = hf === ROOT ? "" : where(hf);
    if (hf !== ROOT) ht = label(hf) + (hw ? " (" + hw + ")" : "") + " with " + bytes(H[0][0]) + " (" + pct(H[0][0], peakView.total) + ")";
  }
  sum.appendChild(el("p", { id: "sum-overall" }, s1 + (ht ? "; the biggest holder at that moment was " + ht + "." : ".")));
  if (H.length)
    sum.appendChild(holderList("sum-holders", "Who held it: the top " + H.length + " stacks live at the heap peak, by their first named frames and the program's own code (whole stacks in the flame graphs below)",
      H, function (h) { return bytes(h[0]) + " (" + pct(h[0], D.peak_bytes) + ") in " + h[1] + " block" + (h[1] === 1 ? "" : "s"); }));
  var RH = D.rss_holders;
  if (RH && RH.stacks.length)
    sum.appendChild(holderList("sum-rss", "Who held the RSS: " + (D.light ? "" : "the live heap at its peak, " + bytes(D.peak_bytes) + ", was under half the peak RSS, " +
      bytes(D.rss_peak) + "; ") + "the top " + RH.stacks.length + " of " + RH.nstacks + " stacks holding anonymous RSS at the RSS peak (the RSS view below has them all)",
      RH.stacks, function (h) { return bytes(h[0]) + " (" + pct(h[0], RH.anon) + " of the anonymous RSS)" + (h[1] ? " [" + h[1] + "]" : ""); }));
  var big = null;
  realInvs.forEach(function (r) { if (!big || r.rss_peak > big.rss_peak) big = r; });
  if (big) {
    var hb = big.stacks ? holderText(big.stacks, big.heap_peak) : "";
    sum.appendChild(el("p", { id: "sum-biggest" }, "The biggest invocation, #" + big.seq + " (" + (big.id || "no request id") +
      ", " + big.outcome + "), peaked at " + bytes(big.rss_peak) + " RSS" + (D.light ? "" : " and " + bytes(big.heap_peak) + " heap") +
      (hb ? "; its biggest holder at its peak was " + hb + "." : ".")));
  } else {
    sum.appendChild(el("p", null, "No invocation was seen (no Lambda Runtime API traffic)."));
  }
  if (D.python_outside > 0)
    sum.appendChild(el("p", { id: "sum-python" }, "Python objects outside the heap view: " + bytes(D.python_outside) +
      " of the RSS at its peak was in CPython's pymalloc arenas, which the heap figures do not show. The RSS view" +
      " (rss.svg) has them by the Python code that grew them; --python-objects traces each object."));
  app.appendChild(sum);

  // Memory over time.
  var tl = D.timeline, chartSec = el("section", { id: "chart" });
  chartSec.appendChild(el("h2", null, "Memory over time"));
  app.appendChild(chartSec);
  var selectInv = function () {};
  (function chart() {
    if (!tl || !tl.source || !tl.t || !tl.t.length) {
      chartSec.appendChild(el("p", { "class": "note", id: "chart-none" }, "No chart: " + ((tl && tl.reason) || "no samples") + "."));
      return;
    }
    var W = 1000, H = 260, L = 70, R = 10, T = 10, B = 30;
    var t = tl.t, tmax = Math.max(t[t.length - 1], 1), ymax = 1, i;
    tl.bands.forEach(function (b) { if (b.t1 > tmax) tmax = b.t1; });
    for (i = 0; i < t.length; i++) ymax = Math.max(ymax, tl.rss[i], tl.rss_max[i] || 0, tl.heap_v ? tl.heap_v[i] : 0);
    ymax *= 1.08;
    function X(v) { return L + (W - L - R) * v / tmax; }
    function Y(v) { return T + (H - T - B) * (1 - v / ymax); }
    var s = svg("svg", { viewBox: "0 0 " + W + " " + H, "class": "chart", id: "chart-svg" });
    tl.bands.forEach(function (b, k) {
      var x0 = X(b.t0), x1 = X(b.t1 >= 0 ? b.t1 : tmax);
      var r = svg("rect", { x: x0, y: T, width: Math.max(1, x1 - x0), height: H - T - B, "class": "band" + (k % 2 ? " odd" : "") });
      var ti = svg("title");
      ti.textContent = (b.seq ? "invocation " + b.seq : "#0 (init, or since attaching)") + (b.id ? " " + b.id : "") + (b.outcome ? " (" + b.outcome + ")" : "");
      r.appendChild(ti);
      r.addEventListener("click", function () { selectInv(b.seq); });
      s.appendChild(r);
      var lab = svg("text", { x: x0 + 2, y: T + 12, "class": "bandlab" });
      lab.textContent = "#" + b.seq;
      s.appendChild(lab);
    });
    for (i = 0; i <= 4; i++) {
      var yv = ymax * i / 4, gy = Y(yv);
      s.appendChild(svg("line", { x1: L, x2: W - R, y1: gy, y2: gy, "class": "grid" }));
      var tx = svg("text", { x: L - 4, y: gy + 4, "class": "axis", "text-anchor": "end" });
      tx.textContent = bytes(yv);
      s.appendChild(tx);
    }
    for (i = 0; i <= 5; i++) {
      var xv = tmax * i / 5, tx2 = svg("text", { x: X(xv), y: H - 10, "class": "axis", "text-anchor": "middle" });
      tx2.textContent = (xv / 1000).toFixed(2) + " s";
      s.appendChild(tx2);
    }
    function line(vals, cls, running) {
      var d = "", m = 0;
      for (var j = 0; j < t.length; j++) {
        var v = vals[j];
        if (running) { m = Math.max(m, v, tl.rss[j]); v = m; }
        d += (j ? " L" : "M") + X(t[j]).toFixed(1) + " " + Y(v).toFixed(1);
      }
      s.appendChild(svg("path", { d: d, "class": cls }));
    }
    if (tl.heap_v) line(tl.heap_v, "l-heap", false);
    line(tl.rss, "l-rss", false);
    // Lambda's Max Memory Used: the running maximum of RSS (the sampler's rss_max when there).
    line(tl.rss_max, "l-hwm", true);
    chartSec.appendChild(s);
    var lg = el("div", { "class": "legend" });
    [["l-rss", "RSS"], ["l-hwm", "Lambda's Max Memory Used (running maximum of RSS)"]].concat(tl.heap_v ? [["l-heap", "heap (malloc'd, live)"]] : []).forEach(function (p) {
      var it = el("span", { "class": "lk" }), sw = el("span", { "class": "sw " + p[0] });
      it.appendChild(sw); it.appendChild(document.createTextNode(p[1])); lg.appendChild(it);
    });
    chartSec.appendChild(lg);
    var n = "From " + (tl.source === "timeline.jsonl" ? "timeline.jsonl (every " + tl.interval_ms + " ms)" :
            "the invocations' own RSS trajectories (" + tl.note + ": only while invocations ran, at most 64 points each)") +
            ": " + t.length + " points";
    if (tl.merged > 1) n += " (" + tl.merged + " samples merged into each, keeping each one's maximum)";
    if (tl.source === "timeline.jsonl") {
      n += "; samples " + tl.samples + ", dropped " + tl.dropped + ", missed ticks " + tl.missed_ticks;
      if (!tl.trailer) n += "; the file has no end line (cut short)";
    }
    if (tl.bad_lines) n += "; " + tl.bad_lines + " lines not understood";
    if (tl.long_lines) n += "; " + tl.long_lines + " lines too long, skipped";
    if (tl.cut) n += "; the file was read only up to its line limit";
    if (tl.cut_bands) n += "; " + tl.cut_bands + " invocation bands not drawn";
    chartSec.appendChild(el("p", { "class": "note", id: "chart-note" }, n + ". Click a band to see that invocation."));
  })();

  // Flame graphs: the profile's views (one tab each, from D.views) and the selected invocation.
  var fsec = el("section", { id: "flames" });
  fsec.appendChild(el("h2", null, "Flame graphs"));
  var tabs = el("div", { "class": "tabs", id: "views" });
  var ctl = el("div", { "class": "controls" });
  var q = el("input", { type: "search", id: "search", placeholder: "search (regular expression)" });
  var pyChk = el("input", { type: "checkbox", id: "pyonly" });
  var pyLab = el("label", { "for": "pyonly" }, " Python/JS frames only (plus the allocating native frame)");
  ctl.appendChild(q); ctl.appendChild(pyChk); ctl.appendChild(pyLab);
  var ftitle = el("h3", { id: "flame-title" });
  var fnote = el("p", { "class": "note", id: "flame-note" });
  fsec.appendChild(tabs); fsec.appendChild(ctl); fsec.appendChild(ftitle); fsec.appendChild(fnote);
  legend(fsec);
  var fl = new Flame(fsec, "main");
  app.appendChild(fsec);
  var current = null;
  function show(src) {
    current = src;
    Array.prototype.forEach.call(tabs.children, function (b) { b.classList.toggle("on", b.getAttribute("data-key") === src.key); });
    ftitle.textContent = src.title;
    fnote.textContent = src.note;
    fl.set(src.stacks, { filter: pyChk.checked ? langOnly : null });
    fl.search(q.value);
  }
  D.views.forEach(function (v) {
    var b = el("button", { "data-key": v.key }, v.title);
    var note = v.nstacks + " stacks, " + bytes(v.total);
    if (v.other_stacks) note += "; the biggest " + (v.nstacks - v.other_stacks) + " drawn, the other " + v.other_stacks +
                               " (" + bytes(v.other_bytes) + ") summed into one \u201c[other stacks]\u201d frame, so the total is right";
    var src = { key: v.key, title: v.title, stacks: v.stacks, note: note };
    b.addEventListener("click", function () { show(src); });
    tabs.appendChild(b);
  });
  q.addEventListener("input", function () { fl.search(q.value); });
  pyChk.addEventListener("change", function () { if (current) show(current); });

  // Invocations.
  var isec = el("section", { id: "invocations" });
  isec.appendChild(el("h2", null, "Invocations"));
  app.appendChild(isec);
  var cols = [["seq", "#", "n"], ["id", "request id", "s"], ["outcome", "outcome", "s"], ["duration_ms", "duration", "ms"],
              ["rss_peak", "RSS peak", "b"], ["heap_peak", "heap peak", "b"], ["vmhwm", "Lambda's Max Memory Used", "b"],
              ["alloc_bytes", "allocated", "b"]];
  var tbl = el("table", { id: "inv-table" }), thead = el("thead"), tbody = el("tbody"), hr = el("tr");
  hr.appendChild(el("th", { title: "choose two for a diff" }, "diff"));
  var sortKey = "seq", sortDir = 1, diffSel = [];
  cols.forEach(function (c) {
    var th = el("th", { "data-col": c[0] }, c[1]);
    th.addEventListener("click", function () {
      sortDir = sortKey === c[0] ? -sortDir : (c[2] === "s" ? 1 : -1); sortKey = c[0]; rows();
    });
    hr.appendChild(th);
  });
  thead.appendChild(hr); tbl.appendChild(thead); tbl.appendChild(tbody);
  if (!invs.length) isec.appendChild(el("p", { "class": "note" }, "No invocation records."));
  else isec.appendChild(tbl);
  isec.appendChild(el("p", { "class": "note" }, "Click a row for that invocation's own flame graph at its peak; tick two rows for a diff. " +
    "Each invocation keeps its " + D.inv_keep + " biggest stacks at its peak (all of them with --per-invocation); the rest are summed into one \u201c[other stacks]\u201d frame" +
    (invs.length > D.max_inv_graphs ? "; stacks are embedded for the first " + D.max_inv_graphs + " invocations only" : "") + "."));
  function cell(r, c) {
    var v = r[c[0]];
    if (c[2] === "b") return bytes(v);
    if (c[2] === "ms") return v.toFixed(1) + " ms";
    if (c[0] === "seq") return v ? String(v) : r.phase;
    return v === "" ? "-" : String(v);
  }
  function rows() {
    var list = invs.slice().sort(function (a, b) {
      var x = a[sortKey], y = b[sortKey];
      return (x < y ? -1 : x > y ? 1 : a.seq - b.seq) * sortDir;
    });
    tbody.textContent = "";
    Array.prototype.forEach.call(hr.children, function (th) {
      th.classList.toggle("sorted", th.getAttribute("data-col") === sortKey);
      th.setAttribute("data-dir", th.getAttribute("data-col") === sortKey ? (sortDir > 0 ? "asc" : "desc") : "");
    });
    list.forEach(function (r) {
      var tr = el("tr", { "data-seq": r.seq, "data-id": r.id });
      var td = el("td"), cb = el("input", { type: "checkbox", "class": "diffpick" });
      cb.checked = diffSel.indexOf(r) >= 0;
      cb.addEventListener("click", function (ev) { ev.stopPropagation(); pickDiff(r, cb.checked); });
      td.appendChild(cb); tr.appendChild(td);
      cols.forEach(function (c) { tr.appendChild(el("td", { "class": c[2] === "s" ? "" : "num" }, cell(r, c))); });
      tr.addEventListener("click", function () { selectInv(r.seq); });
      tbody.appendChild(tr);
    });
  }
  selectInv = function (seq) {
    var r = invs.filter(function (x) { return x.seq === seq; })[0];
    if (!r) return;
    Array.prototype.forEach.call(tbody.children, function (tr) { tr.classList.toggle("sel", tr.getAttribute("data-seq") === String(seq)); });
    var title = (r.seq ? "Invocation " + r.seq : "Init phase") + (r.id ? " (" + r.id + ")" : "") + ": heap live at its own peak";
    var note;
    if (!r.stacks) note = "Its stacks are not in this report (only the first " + D.max_inv_graphs + " invocations carry them, or the kernel's stack table was not readable).";
    else note = r.stacks.length + " stacks, " + bytes(r.heap_peak) + " at its peak" +
      (r.other_stacks ? "; " + r.other_stacks + " smaller stacks (" + bytes(r.other_bytes) + ") summed into \u201c[other stacks]\u201d" : "");
    if (r.overwritten) note += "; its record was overwritten before it was read";
    show({ key: "inv-" + r.seq, title: title, stacks: r.stacks || [], note: note });
    fsec.scrollIntoView({ block: "start" });
  };
  rows();

  // Diff of two invocations.
  var dsec = el("section", { id: "diff" });
  dsec.appendChild(el("h2", null, "Diff of two invocations"));
  var dnote = el("p", { "class": "note", id: "diff-note" }, "Tick two invocations in the table.");
  dsec.appendChild(dnote);
  var dfl = new Flame(dsec, "diff");
  var dtab = el("table", { id: "diff-table" });
  dsec.appendChild(dtab);
  app.appendChild(dsec);
  function pickDiff(r, on) {
    diffSel = diffSel.filter(function (x) { return x !== r; });
    if (on) diffSel.push(r);
    while (diffSel.length > 2) diffSel.shift();
    rows();
    drawDiff();
  }
  function drawDiff() {
    dtab.textContent = "";
    dfl.box.parentNode.style.display = "";
    if (diffSel.length < 2) {
      dnote.textContent = "Tick two invocations in the table.";
      dfl.set([], {});
      dfl.box.style.display = dfl.status.style.display = "none";
      return;
    }
    dfl.box.style.display = dfl.status.style.display = "";
    var A = diffSel[0], B = diffSel[1];
    if (A.seq > B.seq) { var t = A; A = B; B = t; }
    var m = new Map();
    function add(r, k) {
      (r.stacks || []).forEach(function (s) {
        var fr = pyChk.checked ? langOnly(s[1]) : s[1], key = fr.join(",");
        var e = m.get(key);
        if (!e) { e = { fr: fr, a: 0, b: 0 }; m.set(key, e); }
        e[k] += s[0];
      });
    }
    add(A, "a"); add(B, "b");
    var list = Array.from(m.values()), stacks = [], aux = [], maxAbs = 0;
    list.forEach(function (e) { stacks.push([Math.max(e.a, e.b), e.fr]); aux.push(e.b - e.a); });
    var tmp = buildTree(stacks, null, aux);
    (function w(n) { if (n.f !== ROOT) maxAbs = Math.max(maxAbs, Math.abs(n.a)); n.c.forEach(w); })(tmp);
    dnote.textContent = "From #" + A.seq + " (" + (A.id || "-") + ", heap peak " + bytes(A.heap_peak) + ") to #" + B.seq +
      " (" + (B.id || "-") + ", heap peak " + bytes(B.heap_peak) + "): " + signed(B.heap_peak - A.heap_peak) +
      ". Widths: the larger of the two; red grew, blue shrank (deeper colour, bigger change).";
    dfl.set(stacks, { aux: aux, maxAbs: maxAbs || 1 });
    list.sort(function (x, y) { return Math.abs(y.b - y.a) - Math.abs(x.b - x.a); });
    var h = el("tr");
    ["change", "#" + A.seq, "#" + B.seq, "stack (holder first)"].forEach(function (x) { h.appendChild(el("th", null, x)); });
    dtab.appendChild(h);
    list.slice(0, 30).forEach(function (e) {
      if (e.b === e.a) return;
      var tr = el("tr", { "class": e.b > e.a ? "grew" : "shrank" }), hi = e.fr.indexOf(holder(e.fr));
      tr.appendChild(el("td", { "class": "num" }, signed(e.b - e.a)));
      tr.appendChild(el("td", { "class": "num" }, bytes(e.a)));
      tr.appendChild(el("td", { "class": "num" }, bytes(e.b)));
      tr.appendChild(el("td", null, e.fr.slice(Math.max(hi, 0), Math.max(hi, 0) + 5).map(label).join(" \u2190 ")));
      dtab.appendChild(tr);
    });
    if (list.length > 30) dtab.appendChild(el("tr", null, "")).appendChild(el("td", { colspan: 4, "class": "note" }, (list.length - 30) + " more stacks not listed"));
  }
  pyChk.addEventListener("change", drawDiff);
  drawDiff();

  if (D.views.length) show({ key: D.views[0].key, title: D.views[0].title, stacks: D.views[0].stacks,
    note: tabs.firstChild ? "" : "" });
  if (tabs.firstChild) tabs.firstChild.click();
  window.addEventListener("resize", function () { fl.draw(); dfl.draw(); });
})();
