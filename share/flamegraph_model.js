// pf flame graph page, part 1 of 2: the model. pf-flamegraph --format=html embeds this file,
// then flamegraph_page.js, into the page, after the profile's JSON (common/render/html_page.h
// says what it holds). Everything here is computation on typed arrays, with no DOM: the
// tree's layout, each function's self and total weights, the callers and callees of one
// function, search matches, and how weights are shown. flamegraph_page.js draws and handles
// events; share/README.md describes the page's contract.
//
// The tree comes in preorder (node 0 is the root, "all"), so a node's subtree is the range
// [i, end[i]) and every pass is a loop over indices, without recursion: a profile of a
// million nodes is a few arrays of a million numbers.
var pfModel = (function () {
  "use strict";

  // Builds the model from the page's data object (`d`).
  function build(d) {
    var n = d.depth.length + 1, diff = !!d.differential;
    var m = {
      data: d, n: n, diff: diff, names: d.names, nnames: d.names.length,
      depth: new Int32Array(n), name: new Int32Array(n), parent: new Int32Array(n),
      end: new Int32Array(n), self: new Float64Array(n), total: new Float64Array(n),
      start: new Float64Array(n), before: null, totalBefore: null, maxDepth: 0,
      maxAbsDelta: 0, display: []
    };
    if (diff) { m.before = new Float64Array(n); m.totalBefore = new Float64Array(n); }
    m.name[0] = -1;
    m.parent[0] = -1;
    var path = [0], i;
    for (i = 1; i < n; i++) {
      var dep = d.depth[i - 1];
      if (!(dep >= 1 && dep <= path.length)) throw new Error("pf-data: bad depth at node " + i);
      m.depth[i] = dep;
      m.name[i] = d.frame[i - 1];
      m.self[i] = d.self[i - 1];
      if (diff) m.before[i] = d.before[i - 1];
      m.parent[i] = path[dep - 1];
      path.length = dep;
      path.push(i);
      if (dep > m.maxDepth) m.maxDepth = dep;
    }
    sums(m);
    place(m);
    for (i = 0; i < m.nnames; i++) m.display.push(displayName(m.names[i]));
    return m;
  }

  // Subtree ends and totals, children before parents (a reverse preorder pass).
  function sums(m) {
    var i, p;
    for (i = 0; i < m.n; i++) {
      m.end[i] = i + 1;
      m.total[i] = m.self[i];
      if (m.diff) m.totalBefore[i] = m.before[i];
    }
    for (i = m.n - 1; i > 0; i--) {
      p = m.parent[i];
      if (m.end[i] > m.end[p]) m.end[p] = m.end[i];
      m.total[p] += m.total[i];
      if (m.diff) {
        m.totalBefore[p] += m.totalBefore[i];
        var dl = Math.abs(m.self[i] - m.before[i]);
        if (dl > m.maxAbsDelta) m.maxAbsDelta = dl;
      }
    }
  }

  // Each frame's offset in weight units: its self weight first, then its children in order
  // (as flamegraph.pl's flow and the SVG's fg:x place them).
  function place(m) {
    var next = new Float64Array(m.n);
    next[0] = m.self[0];
    for (var i = 1; i < m.n; i++) {
      var p = m.parent[i];
      m.start[i] = next[p];
      next[p] += m.total[i];
      next[i] = m.start[i] + m.self[i];
    }
  }

  // The name shown for a frame: without one trailing annotation (_[k] _[w] _[i] _[j]).
  function displayName(s) {
    var k = s.length;
    if (k >= 4 && s.charAt(k - 4) === "_" && s.charAt(k - 3) === "[" && s.charAt(k - 1) === "]" &&
        "kwij".indexOf(s.charAt(k - 2)) >= 0) {
      return s.substring(0, k - 4);
    }
    return s;
  }

  function nodeName(m, i) { return i === 0 ? "all" : m.display[m.name[i]]; }

  // Per function (name index): self and total weights, after (and before) the change. A
  // function's total counts each stack once: a node adds its subtree only when no node
  // above it has the same name (recursion).
  function functions(m) {
    var k = m.nnames, f = {
      self: new Float64Array(k), total: new Float64Array(k), frames: new Int32Array(k),
      selfBefore: m.diff ? new Float64Array(k) : null,
      totalBefore: m.diff ? new Float64Array(k) : null
    };
    var onPath = new Int32Array(k), path = [];
    for (var i = 1; i < m.n; i++) {
      while (path.length >= m.depth[i]) onPath[m.name[path.pop()]]--;
      var nm = m.name[i];
      f.self[nm] += m.self[i];
      f.frames[nm]++;
      if (m.diff) f.selfBefore[nm] += m.before[i];
      if (onPath[nm] === 0) {
        f.total[nm] += m.total[i];
        if (m.diff) f.totalBefore[nm] += m.totalBefore[i];
      }
      onPath[nm]++;
      path.push(i);
    }
    return f;
  }

  // The callers and callees of function `fn` (a name index), merged over the whole profile:
  // for each caller C, the weight of the stacks in which C calls fn, each stack counted once
  // however often C calls fn in it; likewise for each callee. A root frame's caller is -1
  // (the stack starts there). Returns {callers: [{name, w, b}], callees: [...]} sorted by
  // weight, heaviest first, then by name.
  function butterfly(m, fn) {
    var k = m.nnames + 1;  // callers' keys are name + 1 (0: no caller)
    var upW = new Float64Array(k), upB = new Float64Array(k), upOn = new Int32Array(k);
    var downW = new Float64Array(k), downB = new Float64Array(k), downOn = new Int32Array(k);
    var upSeen = new Uint8Array(k), downSeen = new Uint8Array(k);
    var path = [];
    var leave = function (j) {
      var p = m.parent[j];
      if (m.name[j] === fn) upOn[p === 0 ? 0 : m.name[p] + 1]--;
      if (p > 0 && m.name[p] === fn) downOn[m.name[j]]--;
    };
    for (var i = 1; i < m.n; i++) {
      while (path.length >= m.depth[i]) leave(path.pop());
      var p = m.parent[i], key;
      if (m.name[i] === fn) {
        key = p === 0 ? 0 : m.name[p] + 1;
        if (upOn[key]++ === 0) {
          upW[key] += m.total[i];
          if (m.diff) upB[key] += m.totalBefore[i];
          upSeen[key] = 1;
        }
      }
      if (p > 0 && m.name[p] === fn) {
        key = m.name[i];
        if (downOn[key]++ === 0) {
          downW[key] += m.total[i];
          if (m.diff) downB[key] += m.totalBefore[i];
          downSeen[key] = 1;
        }
      }
      path.push(i);
    }
    var list = function (seen, w, b, shift) {
      var out = [];
      for (var j = 0; j < seen.length; j++) {
        if (seen[j]) out.push({ name: j - shift, w: w[j], b: b[j] });
      }
      out.sort(function (x, y) {
        return y.w - x.w || y.b - x.b || cmpStr(rowName(m, x.name), rowName(m, y.name));
      });
      return out;
    };
    return { callers: list(upSeen, upW, upB, 1), callees: list(downSeen, downW, downB, 0) };
  }

  function rowName(m, nm) { return nm < 0 ? "" : m.display[nm]; }

  function cmpStr(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  // Names matching `re` (a RegExp), tested once per distinct name; the root is "all".
  function matchNames(m, re) {
    var out = new Uint8Array(m.nnames);
    for (var j = 0; j < m.nnames; j++) out[j] = re.test(m.display[j]) ? 1 : 0;
    return { names: out, root: re.test("all") };
  }

  function isMatched(m, match, i) { return i === 0 ? match.root : match.names[m.name[i]] === 1; }

  // The weight under matched frames in the view of node `z` (the zoomed frame, 0: none):
  // all of it when z or a frame below it in the stack (its callers) matches, else the
  // outermost matches within z's subtree, so nested matches count once.
  function matchedWeight(m, match, z) {
    for (var a = z; a >= 0; a = m.parent[a]) if (isMatched(m, match, a)) return m.total[z];
    var sum = 0;
    for (var i = z + 1; i < m.end[z];) {
      if (isMatched(m, match, i)) { sum += m.total[i]; i = m.end[i]; } else i++;
    }
    return sum;
  }

  // The node at offset `x` (weight units) and depth `dep`, or -1.
  function nodeAt(m, x, dep) {
    var i = 0;
    if (x < 0 || x >= m.total[0] || dep < 0) return -1;
    for (var d = 0; d < dep; d++) {
      var found = -1;
      for (var c = i + 1; c < m.end[i]; c = m.end[c]) {
        if (x >= m.start[c] && x < m.start[c] + m.total[c]) { found = c; break; }
      }
      if (found < 0) return -1;
      i = found;
    }
    return i;
  }

  // ---- how weights are shown ----------------------------------------------------------

  function thousands(digits) {
    var neg = digits.charAt(0) === "-", s = neg ? digits.substring(1) : digits;
    var dot = s.indexOf("."), whole = dot < 0 ? s : s.substring(0, dot);
    var frac = dot < 0 ? "" : s.substring(dot);
    var out = "";
    while (whole.length > 3) {
      out = "," + whole.substring(whole.length - 3) + out;
      whole = whole.substring(0, whole.length - 3);
    }
    return (neg ? "-" : "") + whole + out + frac;
  }

  // Fixed-point `w` in the profile's units, times --factor.
  function value(m, w) {
    return w / Math.pow(10, m.data.decimals || 0) * (m.data.factor || 1);
  }

  // A number with up to `dec` decimals, trailing zeros dropped.
  function trimmed(v, dec) {
    var s = v.toFixed(dec);
    if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
    return s === "-0" ? "0" : s;
  }

  // As pf's HumanWeight: times in s/ms/us/ns, sizes in B/kB/MB/... (1024), three digits.
  function scaled(v, unit) {
    var a = Math.abs(v), sign = v < 0 ? "-" : "";
    var digits = function (x) { return x >= 100 ? 0 : x >= 10 ? 1 : 2; };
    if (unit === "nanoseconds") {
      var units = [[1e9, "s"], [1e6, "ms"], [1e3, "us"], [1, "ns"]];
      for (var k = 0; k < units.length; k++) {
        if (a >= units[k][0] || units[k][0] === 1) {
          var x = a / units[k][0];
          if (units[k][0] === 1 && x === Math.round(x)) return sign + x.toFixed(0) + " ns";
          return sign + x.toFixed(digits(x)) + " " + units[k][1];
        }
      }
    }
    var names = ["B", "kB", "MB", "GB", "TB", "PB", "EB"], i = 0;
    while (a >= 1024 && i + 1 < names.length) { a /= 1024; i++; }
    return sign + trimmed(a, digits(a)) + " " + names[i];
  }

  // `w` for people, with its unit: "1,234 samples", "12.3 ms", "4.1 MB".
  function format(m, w) {
    var d = m.data, v = value(m, w);
    if (d.scaled) return scaled(v, d.unit);
    var dec = (d.decimals || 0) + ((d.factor || 1) === 1 ? 0 : 2);
    return thousands(trimmed(v, dec)) + " " + d.countname;
  }

  // The change `w` (after - before) with its sign: "+1,234 samples", "-1.5 ms".
  function formatDelta(m, w) {
    var s = format(m, w);
    return w > 0 ? "+" + s : s;
  }

  // The whole (100%): --total when larger than the profile's total.
  function whole(m) { return Math.max(m.total[0], m.data.total || 0); }

  function pct(part, of) { return (of > 0 ? 100 * part / of : 0).toFixed(2) + "%"; }

  // flamegraph.pl's differential colour (palette.cpp's ScaleColor): red grew, blue shrank.
  function diffColor(m, i) {
    var scale = Math.pow(10, m.data.decimals || 0);
    var v = (m.self[i] - m.before[i]) / scale, max = Math.max(1, m.maxAbsDelta / scale);
    if (m.data.negate) v = -v;
    var r = 255, g = 255, b = 255;
    if (v > 0) g = b = Math.floor(210 * (max - v) / max);
    else if (v < 0) r = g = Math.floor(210 * (max + v) / max);
    return "rgb(" + r + "," + g + "," + b + ")";
  }

  function color(m, i) {
    if (i === 0) return m.diff ? "rgb(255,255,255)" : m.data.rootcolor;
    var nm = m.names[m.name[i]];
    if (nm === "--") return "rgb(160,160,160)";
    if (nm === "-") return "rgb(200,200,200)";
    return m.diff ? diffColor(m, i) : m.data.colors[m.name[i]];
  }

  return {
    build: build, functions: functions, butterfly: butterfly, matchNames: matchNames,
    isMatched: isMatched, matchedWeight: matchedWeight, nodeAt: nodeAt, nodeName: nodeName,
    displayName: displayName, format: format, formatDelta: formatDelta, whole: whole, pct: pct,
    color: color, thousands: thousands, cmpStr: cmpStr
  };
})();
