// pf flame graph page, part 2 of 2: the page. It builds the page's elements, draws the flame
// graph on a <canvas> (one draw call per visible frame, never one element per frame, so a
// million-frame profile stays responsive), and handles the events: hover for details, click
// a frame to zoom to it and select its function, search with a regular expression, sort and
// filter the function table, and show the selected function's callers and callees. The view
// (zoom, search, selection, sort, filter) is kept in the URL's hash, so a reload or a shared
// link restores it. The model (flamegraph_model.js) does the arithmetic; share/README.md
// describes the contract, including window.pfPage, the hook for scripts and tests.
(function () {
  "use strict";
  var M = pfModel;
  var ROWS = 200;  // table rows shown at first, and added by "Show more"
  var m = null, fns = null, el = {};
  var view = {
    zoom: 0, search: "", ic: false, match: null, selected: -1, sort: "total", desc: true,
    filter: "", rows: ROWS, hover: -1
  };
  var widths = null;  // measured label widths per name, at the page's font
  var drawn = { frames: 0, highlighted: 0 };

  function byId(id) { return document.getElementById(id); }

  function make(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function now() { return performance.now(); }

  // ---- the page's elements --------------------------------------------------------------

  function skeleton(d) {
    var body = document.body;
    document.title = d.title;
    var head = make("header", {});
    head.appendChild(make("h1", { id: "title" }, d.title));
    if (d.subtitle) head.appendChild(make("p", { id: "subtitle" }, d.subtitle));
    var bar = make("div", { id: "controls" });
    bar.appendChild(make("button", { id: "reset-zoom", type: "button", disabled: "" }, "Reset Zoom"));
    bar.appendChild(make("input", { id: "search", type: "search", placeholder: "Search (regular expression)",
                                     "aria-label": "Search", spellcheck: "false" }));
    var ic = make("label", { id: "ic-label" });
    ic.appendChild(make("input", { id: "ignorecase", type: "checkbox" }));
    ic.appendChild(document.createTextNode(" ignore case"));
    bar.appendChild(ic);
    bar.appendChild(make("span", { id: "matched" }, ""));
    head.appendChild(bar);
    body.appendChild(head);
    var graph = make("div", { id: "graph" });
    graph.appendChild(make("canvas", { id: "flame" }));
    body.appendChild(graph);
    body.appendChild(make("div", { id: "details" }, "\u00a0"));
    var panels = make("div", { id: "panels" });
    var left = make("section", { id: "table-panel" });
    left.appendChild(make("input", { id: "filter", type: "search", placeholder: "Filter functions",
                                      "aria-label": "Filter functions", spellcheck: "false" }));
    left.appendChild(make("table", { id: "functions" }));
    left.appendChild(make("p", { id: "table-more" }));
    panels.appendChild(left);
    var right = make("section", { id: "butterfly-panel" });
    right.appendChild(make("h2", { id: "selected" }, "Select a function in the table or the graph"));
    right.appendChild(make("table", { id: "butterfly" }));
    panels.appendChild(right);
    body.appendChild(panels);
    ["title", "matched", "search", "ignorecase", "reset-zoom", "flame", "graph", "details", "filter",
     "functions", "table-more", "selected", "butterfly"].forEach(function (id) { el[id] = byId(id); });
    el.canvas = el.flame;
  }

  // ---- the flame graph ------------------------------------------------------------------

  var geo = { width: 0, height: 0, rowH: 16, xpad: 10, dpr: 1 };

  function font() {
    var f = String(m.data.font || "Verdana").replace(/["\\;{}<>]/g, "");
    return m.data.fontsize + "px \"" + f + "\", sans-serif";
  }

  function rowY(depth) {
    var top = 0;
    return m.data.inverted ? top + depth * geo.rowH : geo.height - (depth + 1) * geo.rowH;
  }

  function resize(later) {
    var w = Math.max(200, el.graph.clientWidth || 1200);
    geo.rowH = m.data.frameheight || 16;
    geo.dpr = window.devicePixelRatio || 1;
    geo.width = w;
    geo.height = (m.maxDepth + 1) * geo.rowH;
    if (geo.height * geo.dpr > 32000) geo.dpr = Math.max(0.25, 32000 / geo.height);
    el.canvas.width = Math.round(w * geo.dpr);
    el.canvas.height = Math.round(geo.height * geo.dpr);
    el.canvas.style.width = w + "px";
    el.canvas.style.height = geo.height + "px";
    if (later !== true) draw();
  }

  // The view's range in weight units and its scale in pixels per unit.
  function scale() {
    var z = view.zoom, lo = m.start[z], w = m.total[z] || 1;
    return { lo: lo, hi: lo + m.total[z], ppu: (geo.width - 2 * geo.xpad) / w };
  }

  // Frames narrower than this (pixels) are not drawn, nor their callees: --minwidth.
  function minPixels(s) {
    if (m.data.minwidthPercent) return m.data.minwidth / 100 * M.whole(m) * s.ppu;
    return m.data.minwidth;
  }

  function label(ctx, i, room) {
    if (room < 3 * 7) return "";
    var nm = M.nodeName(m, i), k = i === 0 ? -1 : m.name[i];
    var w = k >= 0 && widths[k] >= 0 ? widths[k] : ctx.measureText(nm).width;
    if (k >= 0) widths[k] = w;
    if (w <= room) return nm;
    var n = Math.floor(nm.length * room / w) - 2;
    while (n > 0 && ctx.measureText(nm.substring(0, n) + "..").width > room) n--;
    return n >= 2 ? nm.substring(0, n) + ".." : "";
  }

  // One frame: its box (the search colour when it matches), its label, and a dark outline
  // when its function is the selected one.
  function drawFrame(ctx, i, x, w, faded) {
    var y = rowY(m.depth[i]), h = geo.rowH - 1;
    var hit = view.match && M.isMatched(m, view.match, i);
    ctx.globalAlpha = faded ? 0.55 : 1;
    ctx.fillStyle = hit ? m.data.searchcolor : M.color(m, i);
    ctx.fillRect(x, y, w, h);
    if (i > 0 && m.name[i] === view.selected) {
      ctx.lineWidth = 2;
      ctx.strokeStyle = "#000";
      ctx.strokeRect(x + 1, y + 1, Math.max(0, w - 2), h - 2);
      drawn.highlighted++;
    }
    var text = label(ctx, i, w - 6);
    if (text) {
      ctx.fillStyle = "#000";
      ctx.fillText(text, x + 3, y + h / 2 + 1);
    }
    drawn.frames++;
  }

  function draw() {
    var ctx = el.canvas.getContext("2d");
    ctx.setTransform(geo.dpr, 0, 0, geo.dpr, 0, 0);
    var grad = ctx.createLinearGradient(0, 0, 0, geo.height);
    grad.addColorStop(0.05, m.data.background[0]);
    grad.addColorStop(0.95, m.data.background[1]);
    ctx.globalAlpha = 1;
    ctx.fillStyle = grad;
    ctx.fillRect(0, 0, geo.width, geo.height);
    ctx.font = font();
    ctx.textBaseline = "middle";
    drawn.frames = drawn.highlighted = 0;
    var s = scale(), min = minPixels(s), full = geo.width - 2 * geo.xpad;
    for (var a = m.parent[view.zoom]; a >= 0; a = m.parent[a]) {
      drawFrame(ctx, a, geo.xpad, full, true);  // the zoomed frame's callers, faded
    }
    var z = view.zoom;
    for (var i = z; i < m.end[z];) {
      var w = m.total[i] * s.ppu;
      if (w < min || m.total[i] === 0) { i = m.end[i]; continue; }
      drawFrame(ctx, i, geo.xpad + (m.start[i] - s.lo) * s.ppu, w, false);
      i++;
    }
    ctx.globalAlpha = 1;
  }

  // The node under the mouse (canvas coordinates in CSS pixels), or -1.
  function hit(px, py) {
    var row = Math.floor(m.data.inverted ? py / geo.rowH : (geo.height - py) / geo.rowH);
    if (row < 0 || row > m.maxDepth) return -1;
    var z = view.zoom;
    if (row < m.depth[z]) {  // a faded caller: it spans the width
      for (var a = z; a >= 0; a = m.parent[a]) if (m.depth[a] === row) return a;
      return -1;
    }
    var s = scale(), x = s.lo + (px - geo.xpad) / s.ppu;
    if (x < s.lo || x >= s.hi) return -1;
    var i = M.nodeAt(m, x, row);
    if (i < 0 || i < z || i >= m.end[z]) return -1;
    return i;
  }

  function frameText(i) {
    var d = m.data, t = M.nodeName(m, i) + " (" + M.format(m, m.total[i]) + ", " +
        M.pct(m.total[i], M.whole(m));
    if (m.diff) t += "; " + M.formatDelta(m, m.total[i] - m.totalBefore[i]) + " since before";
    return (i === 0 ? "" : d.nametype + " ") + t + ")";
  }

  function onMove(ev) {
    var r = el.canvas.getBoundingClientRect(), i = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (i === view.hover) return;
    view.hover = i;
    el.details.textContent = i < 0 ? "\u00a0" : frameText(i);
    el.canvas.style.cursor = i < 0 ? "default" : "pointer";
  }

  function onClick(ev) {
    var r = el.canvas.getBoundingClientRect(), i = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (i < 0) return;
    zoomTo(i);
    if (i > 0) select(m.name[i]);
    save();
  }

  function zoomTo(i) {
    view.zoom = i >= 0 && i < m.n && m.total[i] > 0 ? i : 0;
    if (view.zoom === 0) el["reset-zoom"].setAttribute("disabled", "");
    else el["reset-zoom"].removeAttribute("disabled");
    updateMatched();
    draw();
  }

  // ---- search ---------------------------------------------------------------------------

  // Searches for `term` (a JavaScript regular expression; "" none); false when it does not
  // compile. Redraws unless `later` (the caller draws).
  function search(term, later) {
    view.search = term || "";
    view.match = null;
    el.search.classList.remove("invalid");
    if (view.search) {
      try {
        view.match = M.matchNames(m, new RegExp(view.search, view.ic ? "i" : ""));
      } catch (e) {
        el.search.classList.add("invalid");
        el.matched.textContent = "Invalid regular expression: " + view.search;
        if (!later) draw();
        return false;
      }
    }
    updateMatched();
    if (!later) draw();
    return true;
  }

  function updateMatched() {
    if (!view.match) {
      if (!el.search.classList.contains("invalid")) el.matched.textContent = "";
      return;
    }
    var z = view.zoom, w = M.matchedWeight(m, view.match, z), all = M.whole(m);
    el.matched.textContent = z === 0 ? "Matched: " + M.pct(w, all)
        : "Matched: " + M.pct(w, m.total[z]) + " of view (" + M.pct(w, all) + " of all)";
  }

  // ---- the function table ---------------------------------------------------------------

  var COLUMNS = [
    { key: "name", title: "Function" },
    { key: "self", title: "Self", diff: false }, { key: "selfPct", title: "Self %", diff: false },
    { key: "total", title: "Total", diff: false }, { key: "totalPct", title: "Total %", diff: false },
    { key: "selfBefore", title: "Self before", diff: true }, { key: "self", title: "Self after", diff: true },
    { key: "selfDelta", title: "Self delta", diff: true },
    { key: "totalBefore", title: "Total before", diff: true }, { key: "total", title: "Total after", diff: true },
    { key: "totalDelta", title: "Total delta", diff: true }
  ];

  function columns() {
    return COLUMNS.filter(function (c) { return c.diff === undefined || c.diff === m.diff; });
  }

  function sortValue(key, k) {
    switch (key) {
      case "self": case "selfPct": return fns.self[k];
      case "total": case "totalPct": return fns.total[k];
      case "selfBefore": return fns.selfBefore[k];
      case "totalBefore": return fns.totalBefore[k];
      case "selfDelta": return fns.self[k] - fns.selfBefore[k];
      case "totalDelta": return fns.total[k] - fns.totalBefore[k];
    }
    return 0;
  }

  // The functions the filter keeps, in the table's order.
  function tableOrder() {
    var f = view.filter.toLowerCase(), rows = [];
    for (var k = 0; k < m.nnames; k++) {
      if (fns.frames[k] && (!f || m.display[k].toLowerCase().indexOf(f) >= 0)) rows.push(k);
    }
    var key = view.sort, sign = view.desc ? -1 : 1;
    rows.sort(function (a, b) {
      var c = key === "name" ? M.cmpStr(m.display[a], m.display[b]) : sortValue(key, a) - sortValue(key, b);
      return sign * c || M.cmpStr(m.display[a], m.display[b]) || a - b;
    });
    return rows;
  }

  function cell(key, k) {
    var all = M.whole(m);
    switch (key) {
      case "name": return m.display[k];
      case "selfPct": return M.pct(fns.self[k], all);
      case "totalPct": return M.pct(fns.total[k], all);
      case "selfDelta": case "totalDelta": return M.formatDelta(m, sortValue(key, k));
    }
    return M.format(m, sortValue(key, k));
  }

  function renderTable() {
    var cols = columns(), t = el.functions;
    t.textContent = "";
    var head = make("thead", {}), tr = make("tr", {});
    cols.forEach(function (c) {
      var th = make("th", { "data-key": c.key, scope: "col" }, c.title);
      if (c.key === view.sort) th.setAttribute("aria-sort", view.desc ? "descending" : "ascending");
      tr.appendChild(th);
    });
    head.appendChild(tr);
    t.appendChild(head);
    var rows = tableOrder(), body = make("tbody", {}), shown = Math.min(rows.length, view.rows);
    for (var r = 0; r < shown; r++) {
      var k = rows[r], row = make("tr", { "data-fn": String(k) });
      if (k === view.selected) row.className = "selected";
      for (var c = 0; c < cols.length; c++) {
        row.appendChild(make("td", c ? { class: "num" } : { title: m.names[k] }, cell(cols[c].key, k)));
      }
      body.appendChild(row);
    }
    t.appendChild(body);
    var more = el["table-more"];
    more.textContent = shown + " of " + rows.length + " functions" +
        (rows.length < countFunctions() ? " (filtered)" : "");
    if (shown < rows.length) {
      var b = make("button", { type: "button", id: "show-more" }, "Show more");
      more.appendChild(document.createTextNode(" "));
      more.appendChild(b);
    }
  }

  function countFunctions() {
    var c = 0;
    for (var k = 0; k < m.nnames; k++) if (fns.frames[k]) c++;
    return c;
  }

  // Sorts the table by column `key` (largest first when `desc`); false for no such column.
  function sortBy(key, desc, quiet) {
    if (!columns().some(function (c) { return c.key === key; })) return false;
    view.sort = key;
    view.desc = desc === undefined ? key !== "name" : !!desc;
    if (!quiet) renderTable();
    return true;
  }

  function onHeaderClick(ev) {
    var th = ev.target.closest("th");
    if (!th) return;
    var key = th.getAttribute("data-key");
    sortBy(key, key === view.sort ? !view.desc : key !== "name");
    save();
  }

  function onTableClick(ev) {
    if (ev.target.id === "show-more") { view.rows += 5 * ROWS; renderTable(); return; }
    var tr = ev.target.closest("tr[data-fn]");
    if (!tr) return;
    select(Number(tr.getAttribute("data-fn")));
    save();
  }

  // ---- the selected function: callers above, callees below -------------------------------

  function select(k) {
    view.selected = k >= 0 && k < m.nnames ? k : -1;
    renderButterfly();
    var rows = el.functions.querySelectorAll("tr[data-fn]");
    for (var r = 0; r < rows.length; r++) {
      rows[r].className = Number(rows[r].getAttribute("data-fn")) === view.selected ? "selected" : "";
    }
    draw();
  }

  function bflyRow(kind, name, text, w, b, of) {
    var tr = make("tr", { class: kind });
    if (name >= 0) tr.setAttribute("data-fn", String(name));
    tr.appendChild(make("td", { class: "kind" }, kind === "fn" ? "" : kind === "caller" ? "\u2191" : "\u2193"));
    tr.appendChild(make("td", { class: "name" }, text));
    if (m.diff) {
      tr.appendChild(make("td", { class: "num" }, M.format(m, b)));
      tr.appendChild(make("td", { class: "num" }, M.format(m, w)));
      tr.appendChild(make("td", { class: "num" }, M.formatDelta(m, w - b)));
    } else {
      tr.appendChild(make("td", { class: "num" }, M.format(m, w)));
    }
    tr.appendChild(make("td", { class: "num" }, M.pct(w, of)));
    return tr;
  }

  function renderButterfly() {
    var t = el.butterfly, k = view.selected;
    t.textContent = "";
    if (k < 0) { el.selected.textContent = "Select a function in the table or the graph"; return; }
    var tot = fns.total[k], bf = M.butterfly(m, k), body = make("tbody", {});
    el.selected.textContent = m.display[k];
    var head = make("tr", {});
    var titles = ["", "Callers, then callees", m.diff ? "Before" : "Weight"];
    if (m.diff) titles.push("After", "Delta");
    titles.push("Share");
    titles.forEach(function (h) { head.appendChild(make("th", { scope: "col" }, h)); });
    var thead = make("thead", {});
    thead.appendChild(head);
    t.appendChild(thead);
    bf.callers.forEach(function (c) {
      body.appendChild(bflyRow("caller", c.name, c.name < 0 ? "(the stack's root)" : m.display[c.name],
                               c.w, c.b, tot));
    });
    body.appendChild(bflyRow("fn", -1, m.display[k] + " (total)", tot, m.diff ? fns.totalBefore[k] : 0, tot));
    if (fns.self[k] || (m.diff && fns.selfBefore[k])) {
      body.appendChild(bflyRow("callee", -1, "(self)", fns.self[k], m.diff ? fns.selfBefore[k] : 0, tot));
    }
    bf.callees.forEach(function (c) {
      body.appendChild(bflyRow("callee", c.name, m.display[c.name], c.w, c.b, tot));
    });
    t.appendChild(body);
  }

  function onButterflyClick(ev) {
    var tr = ev.target.closest("tr[data-fn]");
    if (!tr) return;
    select(Number(tr.getAttribute("data-fn")));
    save();
  }

  // ---- the URL: x, y (zoom), s, i (search), f (function), t (sort), q (filter) ------------

  function save() {
    var p = [];
    var add = function (k, v) { p.push(k + "=" + encodeURIComponent(v)); };
    if (view.zoom > 0) { add("x", m.start[view.zoom]); add("y", m.depth[view.zoom]); }
    if (view.search) add("s", view.search);
    if (view.ic) add("i", "1");
    if (view.selected >= 0) add("f", m.names[view.selected]);
    if (view.sort !== "total" || !view.desc) add("t", (view.desc ? "-" : "") + view.sort);
    if (view.filter) add("q", view.filter);
    var hash = p.length ? "#" + p.join("&") : "";
    if (location.hash !== hash && history.replaceState) {
      history.replaceState(null, "", hash || location.pathname + location.search);
    }
  }

  function parseHash() {
    var out = {}, h = location.hash.replace(/^#/, "");
    h.split("&").forEach(function (kv) {
      var eq = kv.indexOf("=");
      if (eq <= 0) return;
      try { out[kv.substring(0, eq)] = decodeURIComponent(kv.substring(eq + 1)); } catch (e) { /* bad escape */ }
    });
    return out;
  }

  // Restores the view the hash names; what it does not name goes back to the default.
  function restore() {
    var q = parseHash(), z = 0;
    if (q.x !== undefined && q.y !== undefined) {
      z = M.nodeAt(m, Number(q.x), Number(q.y));
      if (z < 0 || m.start[z] !== Number(q.x)) z = 0;
    }
    view.ic = q.i === "1";
    el.ignorecase.checked = view.ic;
    view.filter = q.q || "";
    el.filter.value = view.filter;
    var t = q.t || "-total", desc = t.charAt(0) === "-";
    if (!sortBy(desc ? t.substring(1) : t, desc, true)) sortBy("total", true, true);
    view.selected = q.f !== undefined ? m.names.indexOf(q.f) : -1;
    renderTable();
    renderButterfly();
    view.zoom = z;
    el.search.value = q.s || "";
    search(q.s || "", true);
    zoomTo(z);
  }

  // ---- wiring, and the hook for scripts and tests ---------------------------------------

  function wire() {
    el.canvas.addEventListener("mousemove", onMove);
    el.canvas.addEventListener("mouseleave", function () { view.hover = -1; el.details.textContent = "\u00a0"; });
    el.canvas.addEventListener("click", onClick);
    el["reset-zoom"].addEventListener("click", function () { zoomTo(0); save(); });
    el.search.addEventListener("input", function () { search(el.search.value); save(); });
    el.ignorecase.addEventListener("change", function () {
      view.ic = el.ignorecase.checked;
      search(view.search);
      save();
    });
    el.filter.addEventListener("input", function () {
      view.filter = el.filter.value;
      view.rows = ROWS;
      renderTable();
      save();
    });
    el.functions.addEventListener("click", function (ev) {
      if (ev.target.closest("thead")) onHeaderClick(ev); else onTableClick(ev);
    });
    el["table-more"].addEventListener("click", onTableClick);
    el.butterfly.addEventListener("click", onButterflyClick);
    window.addEventListener("hashchange", restore);
    window.addEventListener("resize", resize);
    document.addEventListener("keydown", onKey);
  }

  function onKey(ev) {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "f") { ev.preventDefault(); el.search.focus(); return; }
    if (ev.key !== "Escape") return;
    if (view.search) { el.search.value = ""; search(""); } else if (view.zoom) zoomTo(0); else select(-1);
    save();
  }

  // The box of node `i` in the canvas, in CSS pixels relative to the viewport (for tests).
  function frameRect(i) {
    var r = el.canvas.getBoundingClientRect(), s = scale();
    var x = i >= 0 && (i < view.zoom || i >= m.end[view.zoom]) ? geo.xpad : geo.xpad + (m.start[i] - s.lo) * s.ppu;
    var w = i < view.zoom || i >= m.end[view.zoom] ? geo.width - 2 * geo.xpad : m.total[i] * s.ppu;
    return { left: r.left + x, top: r.top + rowY(m.depth[i]), width: w, height: geo.rowH - 1 };
  }

  // The node of a stack given root first as display names ([] is the root), or -1.
  function nodeOf(path) {
    var i = 0;
    for (var d = 0; d < path.length; d++) {
      var found = -1;
      for (var c = i + 1; c < m.end[i]; c = m.end[c]) if (m.display[m.name[c]] === path[d]) { found = c; break; }
      if (found < 0) return -1;
      i = found;
    }
    return i;
  }

  function state() {
    return {
      zoom: view.zoom, zoomName: M.nodeName(m, view.zoom), search: view.search, ignorecase: view.ic,
      selected: view.selected < 0 ? null : m.display[view.selected], sort: view.sort, desc: view.desc,
      filter: view.filter, framesDrawn: drawn.frames, highlighted: drawn.highlighted,
      matched: el.matched.textContent, nodes: m.n, functions: countFunctions()
    };
  }

  function init() {
    var t0 = now(), root = document.documentElement;
    try {
      var data = JSON.parse(byId("pf-data").textContent);
      m = M.build(data);
      fns = M.functions(m);
      widths = new Float64Array(m.nnames).fill(-1);
      skeleton(data);
      wire();
      resize(true);
      restore();
      window.pfPage = {
        state: state, frameRect: frameRect, nodeOf: nodeOf, frameText: frameText,
        zoomTo: function (i) { zoomTo(i); save(); },
        search: function (re) { el.search.value = re; var ok = search(re); save(); return ok; },
        select: function (name) { select(m.display.indexOf(name)); save(); },
        sortBy: function (key, desc) { var ok = sortBy(key, desc); save(); return ok; }
      };
      root.setAttribute("data-pf-ready", "1");
    } catch (e) {
      root.setAttribute("data-pf-error", String(e && e.message || e));
      throw e;
    } finally {
      root.setAttribute("data-pf-init-ms", (now() - t0).toFixed(1));
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
