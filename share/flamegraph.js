// pf flame graph viewer. pf-flamegraph embeds this file into every SVG it writes, right
// after `var fg_config = {...};`. The SVG structure it relies on is described in
// share/README.md. It needs no network and never measures text in the browser: labels are
// fitted from the name and the width the generator measured (fg:tw).
//
// Everything is read from the DOM once, in init(); each action is then one pass over typed
// arrays that writes only the attributes that change.
var init = (function () {
  "use strict";

  var FG_NS = "http://pf.invalid/flamegraph";
  var NORMAL = 0, PARENT = 1, HIDE = 2;

  var initialized = false;
  var cfg = {};
  var width = 1200, xpad = 10, fontsize = 12, frameheight = 16, inverted = false;
  var nametype = "Function:", searchcolor = "rgb(230,0,230)";
  var total = 0;

  var svg = null, framesEl = null, detailsEl = null, matchedEl = null;
  var unzoomEl = null, searchEl = null, icEl = null;

  // Per frame, by index in document order.
  var n = 0;
  var gEls = [], rectEls = [], textEls = [], titleEls = [], names = [];
  var fx = new Float64Array(0), fw = new Float64Array(0), ftw = new Float64Array(0);
  var fdepth = new Int32Array(0);
  var origX = [], origW = [], origTextX = [], origLabel = [], curLabel = [];  // see capture()
  var cpLen = new Int32Array(0);
  var state = new Uint8Array(0);   // NORMAL, PARENT or HIDE
  var moved = new Uint8Array(0);   // geometry differs from the generated one
  var curPX = new Float64Array(0), curPW = new Float64Array(0);
  var matched = new Uint8Array(0);
  var origFill = [];

  // View state.
  var zoomed = -1;
  var searchTerm = null, searchRe = null, ignorecase = false;

  function now() {
    return (typeof performance !== "undefined" && performance.now) ? performance.now() : Date.now();
  }

  function num(v, dflt) {
    var x = (v === null || v === undefined || v === "") ? NaN : Number(v);
    return isFinite(x) ? x : dflt;
  }

  function fgAttr(el, name) {
    var v = el.getAttribute("fg:" + name);
    if ((v === null || v === "") && el.getAttributeNS) v = el.getAttributeNS(FG_NS, name);
    return v;
  }

  function byId(id) { return document.getElementById(id); }

  function setText(el, s) { if (el && el.textContent !== s) el.textContent = s; }

  function setClass(el, name, on) {
    if (!el) return;
    if (el.classList) {
      el.classList.toggle(name, !!on);
      if (!el.classList.length) el.removeAttribute("class");
    } else {
      var c = (el.getAttribute("class") || "").split(/\s+/).filter(function (k) { return k && k !== name; });
      if (on) c.push(name);
      el.setAttribute("class", c.join(" "));
    }
  }

  function escapeRe(s) { return String(s).replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&"); }

  // ---- reading the frames ------------------------------------------------------------------

  function readConfig() {
    cfg = (typeof fg_config === "object" && fg_config) ? fg_config : {};
    svg = document.documentElement;
    framesEl = byId("frames");
    if (framesEl && framesEl.ownerSVGElement) svg = framesEl.ownerSVGElement;
    width = num(cfg.width, num(svg && svg.getAttribute && svg.getAttribute("width"), 1200));
    xpad = num(cfg.xpad, 10);
    fontsize = num(cfg.fontsize, 12);
    frameheight = num(cfg.frameheight, 16);
    if (!(frameheight > 0)) frameheight = 16;
    inverted = cfg.inverted === true || cfg.inverted === "true" || cfg.inverted === 1;
    nametype = typeof cfg.nametype === "string" ? cfg.nametype : "Function:";
    searchcolor = typeof cfg.searchcolor === "string" && cfg.searchcolor ? cfg.searchcolor : "rgb(230,0,230)";
    detailsEl = byId("details");
    matchedEl = byId("matched");
    unzoomEl = byId("unzoom");
    searchEl = byId("search");
    icEl = byId("ignorecase");
  }

  function nameParser() {
    var countname = typeof cfg.countname === "string" && cfg.countname ? cfg.countname : "samples";
    // "NAME (N samples, P%)" or "NAME (N samples, P%; +D%)".
    var exact = new RegExp("^([\\s\\S]*) \\([^ ()]+ " + escapeRe(countname) + ", [^()]*\\)$");
    var loose = /^([\s\S]*) \([^()]*\)$/;
    return function (title) {
      var m = exact.exec(title) || loose.exec(title);
      return m ? m[1] : title;
    };
  }

  function readFrames() {
    var cap = framesEl.childElementCount || 0;
    var xs = new Float64Array(cap), ws = new Float64Array(cap), tws = new Float64Array(cap);
    var ys = new Float64Array(cap);
    var parse = nameParser();
    var pixelUnits = false;
    var i = 0;
    for (var g = framesEl.firstElementChild; g; g = g.nextElementSibling) {
      var title = null, rect = null, text = null;
      for (var c = g.firstElementChild; c; c = c.nextElementSibling) {
        var ln = c.localName;
        if (ln === "rect") { if (!rect) rect = c; }
        else if (ln === "text") { if (!text) text = c; }
        else if (ln === "title") { if (!title) title = c; }
      }
      if (!rect) continue;
      var x = num(fgAttr(rect, "x"), NaN), w = num(fgAttr(rect, "w"), NaN);
      if (!(isFinite(x) && isFinite(w))) pixelUnits = true;
      xs[i] = x;
      ws[i] = w;
      tws[i] = num(fgAttr(rect, "tw"), -1);
      ys[i] = num(rect.getAttribute("y"), 0);
      var t = title ? title.textContent : "";
      names.push(title ? parse(t) : (text ? text.textContent : ""));
      gEls.push(g);
      rectEls.push(rect);
      textEls.push(text);
      titleEls.push(title);
      g.__fgIndex = i;
      i++;
    }
    n = i;
    fx = xs.subarray(0, n);
    fw = ws.subarray(0, n);
    ftw = tws.subarray(0, n);
    if (pixelUnits) {
      // No fg:x/fg:w: fall back to the pixel geometry (not exact, but usable).
      for (i = 0; i < n; i++) {
        fx[i] = num(rectEls[i].getAttribute("x"), xpad) - xpad;
        fw[i] = num(rectEls[i].getAttribute("width"), 0);
      }
    }
    // Depth from y: the root row is the lowest (largest y), or the highest when inverted.
    fdepth = new Int32Array(n);
    if (n > 0) {
      var base = ys[0];
      for (i = 1; i < n; i++) base = inverted ? Math.min(base, ys[i]) : Math.max(base, ys[i]);
      for (i = 0; i < n; i++) {
        var d = Math.round((inverted ? ys[i] - base : base - ys[i]) / frameheight);
        fdepth[i] = d > 0 ? d : 0;
      }
    }
    origX = new Array(n);
    origW = new Array(n);
    origTextX = new Array(n);
    origLabel = new Array(n);
    curLabel = new Array(n);
    cpLen = new Int32Array(n).fill(-1);
    state = new Uint8Array(n);
    moved = new Uint8Array(n);
    curPX = new Float64Array(n).fill(NaN);
    curPW = new Float64Array(n).fill(NaN);
    matched = new Uint8Array(n);
    origFill = new Array(n);

    total = num(cfg.total, 0);
    if (pixelUnits || !(total > 0)) total = pixelUnits ? 0 : num(fgAttr(framesEl, "total"), 0);
    if (!(total > 0)) {
      for (i = 0; i < n; i++) if (fx[i] + fw[i] > total) total = fx[i] + fw[i];
    }
  }

  // ---- labels ------------------------------------------------------------------------------

  var SURROGATE = /[\uD800-\uDFFF]/;

  function codePoints(i) {
    var c = cpLen[i];
    if (c < 0) {
      var s = names[i];
      c = SURROGATE.test(s) ? Array.from(s).length : s.length;
      cpLen[i] = c;
    }
    return c;
  }

  function prefix(i, k) {
    var s = names[i];
    if (codePoints(i) === s.length) return s.slice(0, k);
    return Array.from(s).slice(0, k).join("");
  }

  // The label for frame i drawn wpx pixels wide: the full name when it fits, else a prefix
  // and "..", else nothing. Proportional to the width measured at generation time.
  function fitLabel(i, wpx) {
    var name = names[i];
    var avail = wpx - 6;
    var tw = ftw[i];
    if (!(tw >= 0)) tw = codePoints(i) * fontsize * 0.59;
    if (avail >= tw) return name;
    if (!(avail > 0) || !(tw > 0)) return "";
    var fit = Math.floor(codePoints(i) * avail / tw);
    if (fit < 3) return "";
    return prefix(i, fit - 2) + "..";
  }

  // ---- zoom --------------------------------------------------------------------------------

  function setState(i, st) {
    if (state[i] === st) return;
    var g = gEls[i];
    if (state[i] !== NORMAL) setClass(g, state[i] === HIDE ? "hide" : "parent", false);
    if (st !== NORMAL) setClass(g, st === HIDE ? "hide" : "parent", true);
    state[i] = st;
  }

  // The generated geometry and label of frame i, read when it first changes (keeps init fast).
  function capture(i) {
    if (origX[i] !== undefined) return;
    var rect = rectEls[i], text = textEls[i];
    origX[i] = rect.getAttribute("x");
    origW[i] = rect.getAttribute("width");
    origTextX[i] = text ? text.getAttribute("x") : null;
    origLabel[i] = curLabel[i] = text ? text.textContent : "";
  }

  function place(i, px, pw) {
    capture(i);
    var rect = rectEls[i], text = textEls[i];
    if (curPX[i] !== px) {
      rect.setAttribute("x", px.toFixed(1));
      if (text) text.setAttribute("x", (px + 3).toFixed(2));
      curPX[i] = px;
    }
    if (curPW[i] !== pw) {
      rect.setAttribute("width", pw.toFixed(1));
      curPW[i] = pw;
      if (text) {
        var label = fitLabel(i, pw);
        if (label !== curLabel[i]) { text.textContent = label; curLabel[i] = label; }
      }
    }
    moved[i] = 1;
  }

  function restore(i) {
    if (!moved[i]) return;
    var rect = rectEls[i], text = textEls[i];
    if (origX[i] === null) rect.removeAttribute("x"); else rect.setAttribute("x", origX[i]);
    if (origW[i] === null) rect.removeAttribute("width"); else rect.setAttribute("width", origW[i]);
    if (text) {
      if (origTextX[i] !== null) text.setAttribute("x", origTextX[i]);
      if (curLabel[i] !== origLabel[i]) { text.textContent = origLabel[i]; curLabel[i] = origLabel[i]; }
    }
    curPX[i] = NaN;
    curPW[i] = NaN;
    moved[i] = 0;
  }

  function isRoot(i) {
    return fdepth[i] === 0 && fx[i] <= 0 && fx[i] + fw[i] >= total;
  }

  function zoom(z) {
    if (!(z >= 0 && z < n) || isRoot(z)) { unzoom(); return; }
    zoomed = z;
    var zx = fx[z], zw = fw[z], zd = fdepth[z], zend = zx + zw;
    var full = width - 2 * xpad;
    var scale = zw > 0 ? full / zw : 0;
    for (var i = 0; i < n; i++) {
      var d = fdepth[i], x = fx[i], w = fw[i], st;
      if (d < zd) st = (x <= zx && x + w >= zend) ? PARENT : HIDE;
      else if (d === zd) st = i === z ? NORMAL : HIDE;
      else st = (x >= zx && x + w <= zend) ? NORMAL : HIDE;
      setState(i, st);
      if (st === NORMAL) place(i, xpad + (x - zx) * scale, w * scale);
      else if (st === PARENT) place(i, xpad, full);
    }
    setClass(unzoomEl, "hide", false);
    updateMatched();
  }

  function unzoom() {
    zoomed = -1;
    for (var i = 0; i < n; i++) {
      if (state[i] !== NORMAL) setState(i, NORMAL);
      if (moved[i]) restore(i);
    }
    setClass(unzoomEl, "hide", true);
    updateMatched();
  }

  function findFrame(x, depth) {
    var best = -1;
    for (var i = 0; i < n; i++) {
      if (fx[i] === x && fdepth[i] === depth && (best < 0 || fw[i] > fw[best])) best = i;
    }
    return best;
  }

  // ---- search ------------------------------------------------------------------------------

  function pct(part, whole) {
    return (whole > 0 ? 100 * part / whole : 0).toFixed(2);
  }

  // Samples covered by the matched frames (within the zoomed frame when zoomed). Frames nest,
  // so a sweep over the intervals in order of their start counts nested matches once.
  function matchedSamples() {
    var lo = -Infinity, hi = Infinity;
    if (zoomed >= 0) { lo = fx[zoomed]; hi = lo + fw[zoomed]; }
    var starts = [], ends = [];
    var sorted = true, last = -Infinity;
    for (var i = 0; i < n; i++) {
      if (!matched[i] || (zoomed >= 0 && state[i] === HIDE)) continue;
      var s = Math.max(fx[i], lo), e = Math.min(fx[i] + fw[i], hi);
      if (!(e > s)) continue;
      if (s < last) sorted = false;
      last = s;
      starts.push(s);
      ends.push(e);
    }
    var order = starts.map(function (_, k) { return k; });
    if (!sorted) order.sort(function (a, b) { return starts[a] - starts[b] || ends[b] - ends[a]; });
    var sum = 0, end = -Infinity;
    for (var k = 0; k < order.length; k++) {
      var a = starts[order[k]], b = ends[order[k]];
      if (a >= end) { sum += b - a; end = b; }
      else if (b > end) { sum += b - end; end = b; }
    }
    return sum;
  }

  function updateMatched() {
    if (!matchedEl) return;
    if (!searchRe) { setText(matchedEl, " "); return; }
    var m = matchedSamples();
    if (zoomed >= 0) {
      setText(matchedEl, "Matched: " + pct(m, fw[zoomed]) + "% of view (" + pct(m, total) + "% of all)");
    } else {
      setText(matchedEl, "Matched: " + pct(m, total) + "%");
    }
  }

  function highlight(next) {
    for (var i = 0; i < n; i++) {
      if (next[i] === matched[i]) continue;
      var rect = rectEls[i];
      if (next[i]) {
        if (origFill[i] === undefined) origFill[i] = rect.getAttribute("fill");
        rect.setAttribute("fill", searchcolor);
      } else if (origFill[i] === null) {
        rect.removeAttribute("fill");
      } else if (origFill[i] !== undefined) {
        rect.setAttribute("fill", origFill[i]);
      }
    }
    matched = next;
  }

  // Runs a search for `term` (a JavaScript regular expression). Returns false when the
  // expression does not compile: the message goes to #matched and the search is cleared.
  function search(term) {
    if (term === null || term === undefined || term === "") { resetSearch(); return true; }
    term = String(term);
    var re;
    try {
      re = new RegExp(term, ignorecase ? "i" : "");
    } catch (e) {
      resetSearch();
      setText(matchedEl, "Invalid regular expression: " + term);
      return false;
    }
    var next = new Uint8Array(n);
    for (var i = 0; i < n; i++) if (re.test(names[i])) next[i] = 1;
    highlight(next);
    searchTerm = term;
    searchRe = re;
    setText(searchEl, "Reset Search");
    setClass(searchEl, "search-on", true);
    updateMatched();
    return true;
  }

  function resetSearch() {
    highlight(new Uint8Array(n));
    searchTerm = null;
    searchRe = null;
    setText(searchEl, "Search");
    setClass(searchEl, "search-on", false);
    setText(matchedEl, " ");
  }

  function setIgnorecase(on) {
    ignorecase = !!on;
    setClass(icEl, "ic-on", ignorecase);
    if (searchTerm !== null) search(searchTerm);
  }

  function promptSearch() {
    var hint = "Search for a function (JavaScript regular expression" +
        (ignorecase ? ", ignoring case" : "") + "):";
    var term = window.prompt(hint, searchTerm !== null ? searchTerm : "");
    if (term === null) return;  // cancelled
    search(term);
    updateUrl();
  }

  // ---- URL state ---------------------------------------------------------------------------
  // ?s=REGEX&i=1&x=FG_X&y=DEPTH. Values are percent-decoded; "+" stays a literal plus, so a
  // hand-written ?s=a+b searches for the regex "a+b".

  var OURS = { s: 1, i: 1, x: 1, y: 1 };

  function decode(v) {
    try { return decodeURIComponent(v); } catch (e) { return v; }
  }

  function readParams() {
    var out = {};
    var q = "";
    try { q = window.location.search || ""; } catch (e) { return out; }
    q.replace(/^\?/, "").split("&").forEach(function (part) {
      if (!part) return;
      var eq = part.indexOf("=");
      var k = decode(eq < 0 ? part : part.slice(0, eq));
      var v = eq < 0 ? "" : decode(part.slice(eq + 1));
      if (OURS[k] && !(k in out)) out[k] = v;
    });
    return out;
  }

  function updateUrl() {
    try {
      if (!window.history || !window.history.replaceState) return;
      var loc = window.location;
      var keep = (loc.search || "").replace(/^\?/, "").split("&").filter(function (part) {
        if (!part) return false;
        var eq = part.indexOf("=");
        return !OURS[decode(eq < 0 ? part : part.slice(0, eq))];
      });
      if (zoomed >= 0) keep.push("x=" + fx[zoomed], "y=" + fdepth[zoomed]);
      if (searchTerm !== null) keep.push("s=" + encodeURIComponent(searchTerm));
      if (ignorecase) keep.push("i=1");
      var url = loc.pathname + (keep.length ? "?" + keep.join("&") : "") + (loc.hash || "");
      if (url !== loc.pathname + loc.search + (loc.hash || "")) {
        window.history.replaceState(window.history.state, "", url);
      }
    } catch (e) {
      // Some viewers forbid it (sandboxed frames, odd file:// policies): the view still works.
    }
  }

  function restoreFromUrl() {
    var p = readParams();
    if (p.i === "1" || p.i === "true") setIgnorecase(true);
    if (p.x !== undefined && p.y !== undefined) {
      var x = num(p.x, NaN), y = num(p.y, NaN);
      if (isFinite(x) && isFinite(y)) {
        var z = findFrame(x, y);
        if (z >= 0) zoom(z);
      }
    }
    if (p.s !== undefined && p.s !== "") search(p.s);
  }

  // ---- events ------------------------------------------------------------------------------

  function frameOf(el) {
    while (el && el !== framesEl) {
      if (el.parentNode === framesEl) {
        var i = el.__fgIndex;
        return typeof i === "number" ? i : -1;
      }
      el = el.parentNode;
    }
    return -1;
  }

  function showDetails(i) {
    var t = titleEls[i] ? titleEls[i].textContent : names[i];
    setText(detailsEl, nametype + " " + t);
  }

  function clearDetails() { setText(detailsEl, " "); }

  function onKey(e) {
    var k = e.key;
    var mod = (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey;
    if (k === "F3" || (mod && (k === "f" || k === "F"))) {
      e.preventDefault();
      promptSearch();
    } else if (mod && (k === "i" || k === "I")) {
      e.preventDefault();
      setIgnorecase(!ignorecase);
      updateUrl();
    } else if (k === "Escape" || k === "Esc") {
      if (searchTerm !== null) resetSearch(); else unzoom();
      updateUrl();
    }
  }

  function attach() {
    if (framesEl) {
      framesEl.addEventListener("mouseover", function (e) {
        var i = frameOf(e.target);
        if (i >= 0) showDetails(i);
      });
      framesEl.addEventListener("mouseout", function (e) {
        var i = frameOf(e.target);
        if (i >= 0 && frameOf(e.relatedTarget) === i) return;
        clearDetails();
      });
      framesEl.addEventListener("click", function (e) {
        var i = frameOf(e.target);
        if (i < 0) return;
        // A frame linked by --nameattr follows its link; Ctrl-click zooms (flamegraph.pl's).
        if (gEls[i].localName === "a") {
          if (!(e.ctrlKey || e.metaKey)) return;
          e.preventDefault();
        }
        zoom(i);
        updateUrl();
      });
    }
    if (unzoomEl) unzoomEl.addEventListener("click", function () { unzoom(); updateUrl(); });
    if (searchEl) {
      searchEl.addEventListener("click", function () {
        if (searchTerm !== null) { resetSearch(); updateUrl(); } else promptSearch();
      });
    }
    if (icEl) icEl.addEventListener("click", function () { setIgnorecase(!ignorecase); updateUrl(); });
    window.addEventListener("keydown", onKey);
  }

  // ---- entry points ------------------------------------------------------------------------

  function init(evt) {
    if (initialized) return;
    initialized = true;
    var t0 = now();
    try {
      readConfig();
      if (framesEl) readFrames();
      if (matchedEl) matchedEl.setAttribute("x", String(width - xpad));  // right-aligned (CSS)
      attach();
      restoreFromUrl();
    } catch (e) {
      if (svg) svg.setAttribute("data-fg-error", String(e && e.message || e));
      if (typeof console !== "undefined") console.error(e);
    }
    if (svg) {
      svg.setAttribute("data-fg-frames", String(n));
      svg.setAttribute("data-fg-init-ms", (now() - t0).toFixed(1));
      svg.setAttribute("data-fg-ready", "1");
    }
  }

  // A small API for scripts and tests; each call updates the URL like the matching UI action.
  function after(f) {
    return function () { var r = f.apply(null, arguments); updateUrl(); return r; };
  }
  window.fg_api = {
    zoomTo: after(function (x, depth) { var z = findFrame(Number(x), Number(depth)); zoom(z); return z >= 0; }),
    unzoom: after(unzoom),
    search: after(search),
    resetSearch: after(resetSearch),
    setIgnorecase: after(setIgnorecase),
    state: function () {
      return { zoomX: zoomed >= 0 ? fx[zoomed] : null, zoomDepth: zoomed >= 0 ? fdepth[zoomed] : null,
               search: searchTerm, ignorecase: ignorecase, frames: n };
    }
  };

  // In case the host drops the onload attribute (e.g. an SVG inlined into HTML).
  if (document.readyState === "complete") setTimeout(function () { init(); }, 0);
  else window.addEventListener("load", function () { init(); });

  return init;
})();
