// The interactive timeline of a run's index.html (reports/timeline_html.cpp embeds this file and
// the run's data as JSON in #timeline-data). Self-contained: no library, nothing fetched, so the
// page works offline. It draws into svg#timeline-svg, a lane per tree path (grouped by node, in
// tree order), the leader-election and channel-backlog lanes, bands for partitions, link faults,
// pauses, outages and draining, the chaos and quiet phases, and the marks; zoom (buttons, the
// wheel), pan (drag), a tooltip for every mark, bar, band and label (#tip), and `#t=NS` links
// (a failing check's witness) that centre the window on an instant and draw a cursor there.
// The window shown is kept in #timeline's data-from-ns and data-to-ns.
(function () {
  'use strict';
  var box = document.getElementById('timeline');
  var dataEl = document.getElementById('timeline-data');
  if (!box || !dataEl) return;
  var D = JSON.parse(dataEl.textContent);
  var svg = document.getElementById('timeline-svg');
  var tip = document.getElementById('tip');
  var shown = document.getElementById('tl-window');
  var W = 1200, L = 248, R = 1164, LABEL_W = 232;
  var PHASE_Y = 6, BAND_TOP = 24, BAND_ROW = 11, MAX_BAND_ROWS = 6;
  var end = Math.max(D.end, 1);
  // The page's data keeps marks of one kind closer than end / 100,000 together: the narrowest
  // window shows ten of those slots, so nothing is drawn finer than the data is.
  var minSpan = Math.max(1000, Math.floor(end / 1e4));
  var from = 0, to = end, cursor = null, drag = null;

  // Bands: each in the first row free at its start (no two overlap), at most MAX_BAND_ROWS rows.
  var rowsEnd = [];
  D.bands.forEach(function (b) {
    var r = 0;
    while (r < rowsEnd.length && rowsEnd[r] > b[0]) r++;
    if (r >= MAX_BAND_ROWS) r = MAX_BAND_ROWS - 1;
    rowsEnd[r] = Math.max(rowsEnd[r] || 0, b[1]);
    b.row = r;
  });
  var bandRows = rowsEnd.length;
  var WORLD_Y = BAND_TOP + bandRows * BAND_ROW + 8;
  var AXIS_Y = WORLD_Y + 14;
  var TOP = AXIS_Y + 8;

  // Rows of lanes, top to bottom: leadership, the database's holder, the tree, the backlogs.
  var rows = [];
  D.leaders.forEach(function (l) { rows.push({kind: 'leader', l: l}); });
  if (D.leaders.length) rows.push({kind: 'holder'});
  D.lanes.forEach(function (l) { rows.push({kind: 'lane', l: l}); });
  D.backlogs.forEach(function (b) { rows.push({kind: 'backlog', b: b}); });
  var laneH = Math.max(10, Math.min(24, Math.floor(720 / Math.max(rows.length, 1))));
  var bottom = TOP + laneH * rows.length;
  var H = bottom + 12 + (rows.length ? 0 : 24);
  svg.setAttribute('width', W);
  svg.setAttribute('height', H);
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }
  function fmtT(ns) {
    ns = Math.round(ns);
    var s = Math.floor(ns / 1e9), rest = ns - s * 1e9;
    if (rest === 0) return s + 's';
    var frac = String(rest);
    while (frac.length < 9) frac = '0' + frac;
    return s + '.' + frac.replace(/0+$/, '') + 's';
  }
  function span(a, b) { return fmtT(a) + ' \u2013 ' + fmtT(b); }
  function x(t) { return L + (t - from) / (to - from) * (R - L); }
  function visible(a, b) { return b >= from && a <= to; }
  function clampX(v) { return Math.max(L, Math.min(R, v)); }
  function num(v) { return v.toFixed(1); }

  // A tick step of 1, 2 or 5 x 10^k ns with at most 11 ticks, labelled in the largest unit that
  // divides it.
  function ticks() {
    var raw = (to - from) / 10, p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1)))), step = p;
    [1, 2, 5, 10].some(function (m) { step = m * p; return step >= raw; });
    step = Math.max(1, Math.round(step));
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];
    var u = units[units.length - 1];
    for (var i = 0; i < units.length; i++) if (step % units[i][0] === 0) { u = units[i]; break; }
    var out = '', first = Math.ceil(from / step) * step;
    for (var t = first; t <= to; t += step) {
      var tx = x(t);
      out += '<line class="grid" x1="' + num(tx) + '" y1="' + (TOP - 4) + '" x2="' + num(tx) + '" y2="' + Math.max(bottom, TOP) + '"/>';
      out += '<text class="tick" x="' + num(tx) + '" y="' + AXIS_Y + '" text-anchor="middle">' + (t / u[0]) + u[1] + '</text>';
    }
    return out;
  }

  // Marks of one kind closer than a pixel at this zoom share one marker.
  function merged(marks) {
    var out = [], last = {};
    marks.forEach(function (m) {
      if (m[0] < from || m[0] > to) return;
      var mx = x(m[0]), l = last[m[1]];
      if (l !== undefined && mx - out[l].x < 1) {
        out[l].n += m[3] || 1;
        out[l].last = Math.max(out[l].last, m[4] || m[0]);
        return;
      }
      last[m[1]] = out.length;
      out.push({x: mx, kind: m[1], first: m[0], last: m[4] || m[0], n: m[3] || 1, tip: m[2]});
    });
    var layer = {restart: 0, operation: 1, fault: 2, crash: 3, kill: 4, escalation: 5};
    out.sort(function (a, b) { return layer[a.kind] - layer[b.kind]; });
    return out;
  }
  function marker(m, cy, s, extra) {
    var tipText = m.n === 1 ? m.tip : m.n + ' x ' + m.kind + ', ' + span(m.first, m.last);
    var a = ' class="mark ' + m.kind + (extra || '') + '" data-tip="' + esc(tipText) + '"';
    var X = m.x;
    switch (m.kind) {
      case 'crash': return '<path' + a + ' d="M' + num(X - s) + ',' + num(cy - s) + 'h' + num(2 * s) + 'l' + num(-s) + ',' + num(2 * s) + 'z"/>';
      case 'kill': return '<path' + a + ' d="M' + num(X - s) + ',' + num(cy - s) + 'l' + num(2 * s) + ',' + num(2 * s) + 'm0,' + num(-2 * s) + 'l' + num(-2 * s) + ',' + num(2 * s) + '"/>';
      case 'restart': return '<circle' + a + ' cx="' + num(X) + '" cy="' + num(cy) + '" r="' + num(s * 0.8) + '"/>';
      case 'operation': return '<path' + a + ' d="M' + num(X) + ',' + num(cy - 1.4 * s) + 'v' + num(2.8 * s) + '"/>';
      case 'escalation': return '<path' + a + ' d="M' + num(X) + ',' + num(cy - 1.4 * s) + 'l' + num(1.4 * s) + ',' + num(1.4 * s) + 'l' + num(-1.4 * s) + ',' + num(1.4 * s) + 'l' + num(-1.4 * s) + ',' + num(-1.4 * s) + 'z"/>';
      default: return '<path' + a + ' d="M' + num(X - s) + ',' + num(cy + s) + 'h' + num(2 * s) + 'l' + num(-s) + ',' + num(-2 * s) + 'z"/>';
    }
  }
  function rect(cls, a, b, y, h, tipText) {
    if (!visible(a, b)) return '';
    var x0 = clampX(x(a)), x1 = clampX(x(b));
    return '<rect class="' + cls + '" x="' + num(x0) + '" y="' + num(y) + '" width="' + num(Math.max(x1 - x0, 0.5)) +
      '" height="' + num(h) + '"' + (tipText ? ' data-tip="' + esc(tipText) + '"' : '') + '/>';
  }
  // Intervals as bars, joined where the gap between two is under a pixel.
  function bars(list, cls, y, h, what) {
    var out = '', cur = null;
    function flush() {
      if (cur) out += rect(cls, cur[0], cur[1], y, h, (cur[2] > 1 ? what + ' (' + cur[2] + ' intervals) ' : what + ' ') + span(cur[0], cur[1]));
    }
    list.forEach(function (i) {
      if (!visible(i[0], i[1])) return;
      if (cur && x(i[0]) - x(cur[1]) < 1) { cur[1] = i[1]; cur[2]++; return; }
      flush();
      cur = [i[0], i[1], 1];
    });
    flush();
    return out;
  }
  function label(text, tipText, y, cls, indent) {
    var font = Math.max(8, Math.min(12, laneH - 4));
    var chars = Math.floor((LABEL_W - indent) / (font * 0.6));
    var t = text.length > chars ? '\u2026' + text.slice(text.length - chars + 1) : text;
    return '<text class="lane-label ' + cls + '" x="' + (8 + indent) + '" y="' + num(y + laneH / 2 + font * 0.35) +
      '" font-size="' + font + '" data-tip="' + esc(tipText) + '">' + esc(t) + '</text>';
  }
  function treeLane(l, y, i) {
    var cy = y + laneH / 2, barH = laneH * 0.6, out = '';
    var indent = Math.min(l.d, 8) * 8;
    var head = label(l.d === 0 ? l.p : l.p.slice(l.p.lastIndexOf('/') + 1), l.tip, y, 'path', indent);
    var first = i === 0 || rows[i - 1].kind !== 'lane' || rows[i - 1].l.n !== l.n;
    if (first && i > 0) head += '<line class="nodesep" x1="0" y1="' + y + '" x2="' + W + '" y2="' + y + '"/>';
    if (first && l.n) head += '<text class="nodetag" x="' + (L - 4) + '" y="' + num(y + 9) + '" text-anchor="end" data-tip="' + esc('node ' + l.n + ': the lanes below run there') + '">' + esc(l.n) + '</text>';
    if (l.up.length) out += rect('down', l.up[0][0], end, cy - barH / 4, barH / 2, '');
    out += bars(l.up, 'up', cy - barH / 2, barH, 'up');
    if (l.st) out += states(l.st, y + laneH - Math.max(2, laneH * 0.18) - 1, Math.max(2, laneH * 0.18));
    var s = Math.min(laneH * 0.3, 5);
    merged(l.m).forEach(function (m) { out += marker(m, cy, s); });
    return {head: head, body: out};
  }
  // A lifecycle service's states as a thin strip under its bar, each from its change to the next.
  function states(st, y, h) {
    var out = '';
    var lastX = -1;
    st.forEach(function (s, i) {
      var next = i + 1 < st.length ? st[i + 1][0] : end;
      if (next <= s[0] && i + 1 < st.length) return;  // replaced at the same instant
      if (!visible(s[0], next)) return;
      var x1 = Math.floor(clampX(x(next)));
      if (x1 === lastX && i + 1 < st.length) return;  // within a pixel drawn already
      lastX = x1;
      out += rect('state st-' + s[1].split(' ')[0], s[0], Math.max(next, s[0] + 1), y, h, s[1] + ', ' + span(s[0], next));
    });
    return out;
  }
  // A channel's length as a step area, per pixel column the longest it was there.
  function backlogLane(b, y) {
    var head = label(b.name + ' (' + b.max + '/' + b.cap + ')', 'channel ' + b.name + ' on ' + b.node + ': capacity ' + b.cap + ', longest ' + b.max, y, 'backlog', 0);
    var bot = y + laneH - 1, top = y + 2, sc = b.max ? (bot - top) / b.max : 0;
    var pts = [num(L) + ',' + num(bot)], len = 0, col = -1, colMax = 0, colLast = 0;
    function emit(cx, v) { pts.push(num(cx) + ',' + num(bot - sc * len), num(cx) + ',' + num(bot - sc * v)); len = v; }
    // Per pixel column: up to the longest it was there, then down to where it ended.
    function column() {
      emit(col, colMax);
      if (colLast !== colMax) emit(Math.min(col + 1, R), colLast);
    }
    b.s.forEach(function (st) {
      if (st[0] > to) return;
      var cx = st[0] < from ? L : Math.floor(x(st[0]));
      if (cx === col) { colMax = Math.max(colMax, st[1]); colLast = st[1]; return; }
      if (col >= 0) column();
      col = cx; colMax = st[1]; colLast = st[1];
    });
    if (col >= 0) column();
    pts.push(num(R) + ',' + num(bot - sc * len), num(R) + ',' + num(bot));
    return {head: head, body: '<polygon class="backlog" points="' + pts.join(' ') + '" data-tip="' + esc(b.name + ' backlog: longest ' + b.max + ' of ' + b.cap) + '"/>'};
  }
  function ticksAt(list, cls, y0, y1, what) {
    var out = '', last = -1;
    list.forEach(function (t) {
      if (t < from || t > to) return;
      var tx = Math.floor(x(t));
      if (tx === last) return;
      last = tx;
      out += '<line class="' + cls + '" x1="' + tx + '" y1="' + num(y0) + '" x2="' + tx + '" y2="' + num(y1) + '" data-tip="' + esc(what + ' at ' + fmtT(t)) + '"/>';
    });
    return out;
  }
  function leaderLane(l, y) {
    var head = label('leader? ' + l.node, l.node + ': believes it leads (leader_belief), and its leader writes', y, 'role', 0);
    var h = laneH * 0.5, top = y + laneH * 0.15;
    var out = bars(l.b, 'believed', top, h, l.node + ' believes it leads,');
    out += ticksAt(l.w, 'write', top + h, y + laneH - 1, l.node + ': accepted leader write');
    out += ticksAt(l.u, 'unsafe', y + 1, y + laneH - 1, l.node + ': write while another node held the leadership');
    return {head: head, body: out};
  }
  function holderLane(y) {
    var colours = ['#5e35b1', '#00897b', '#6d4c41', '#3949ab', '#c0ca33', '#8d6e63'];
    var head = label('DB lock holder', 'who the database had as leader: the lock\'s session, or the lease', y, 'role', 0);
    var out = '';
    D.holders.forEach(function (h) {
      if (!visible(h[0], h[1])) return;
      var ix = 0;
      while (ix < D.leaders.length && D.leaders[ix].node !== h[2]) ix++;
      var r = rect('holder', h[0], h[1], y + laneH * 0.15, laneH * 0.7, h[2] + ' holds it, ' + span(h[0], h[1]));
      out += r.replace('<rect ', '<rect fill="' + colours[ix % colours.length] + '" ');
    });
    return {head: head, body: out};
  }
  function bands() {
    var shade = '', heads = '';
    D.bands.forEach(function (b) {
      if (!visible(b[0], b[1])) return;
      var tipText = b[2] + ' ' + b[3] + ', ' + span(b[0], b[1]);
      shade += rect('shade ' + b[2], b[0], b[1], BAND_TOP + bandRows * BAND_ROW, Math.max(bottom, TOP) - BAND_TOP - bandRows * BAND_ROW, '');
      var y = BAND_TOP + b.row * BAND_ROW;
      heads += rect('band ' + b[2], b[0], b[1], y, BAND_ROW - 1, tipText);
      var w = clampX(x(b[1])) - clampX(x(b[0]));
      if (w > 40) heads += '<text class="bandlabel" x="' + num(clampX(x(b[0])) + 2) + '" y="' + num(y + 8) + '">' + esc(b[3].slice(0, Math.floor(w / 5.6))) + '</text>';
    });
    return {shade: shade, heads: heads};
  }
  function phases() {
    var out = '';
    D.phases.forEach(function (p) {
      out += rect('phase ' + p[2], p[0], p[1], PHASE_Y, 12, p[2] + ' phase, ' + span(p[0], p[1]) +
        (p[2] === 'chaos' ? ': the faults act' : ': the faults are off and the network healed'));
      var w = clampX(x(p[1])) - clampX(x(p[0]));
      if (w > 40 && visible(p[0], p[1])) out += '<text class="phaselabel" x="' + num(clampX(x(p[0])) + 3) + '" y="' + (PHASE_Y + 9) + '">' + p[2] + '</text>';
    });
    return out;
  }

  function draw() {
    var out = '<defs><clipPath id="tl-plot"><rect x="' + L + '" y="0" width="' + (R - L) + '" height="' + H + '"/></clipPath></defs>';
    out += '<rect x="0" y="0" width="' + W + '" height="' + H + '" fill="#ffffff"/>';
    for (var i = 1; i < rows.length; i += 2) out += '<rect class="stripe" x="0" y="' + (TOP + laneH * i) + '" width="' + W + '" height="' + laneH + '"/>';
    var bd = bands();
    out += '<g clip-path="url(#tl-plot)">' + bd.shade + '</g>';
    out += '<text class="tick" x="8" y="' + AXIS_Y + '">virtual time</text>' + ticks();
    var lanes = '', labels = '';
    rows.forEach(function (r, i) {
      var y = TOP + laneH * i, s;
      if (r.kind === 'lane') s = treeLane(r.l, y, i);
      else if (r.kind === 'backlog') s = backlogLane(r.b, y);
      else if (r.kind === 'leader') s = leaderLane(r.l, y);
      else s = holderLane(y);
      labels += s.head;  // outside the plot's clip
      lanes += s.body;
    });
    out += labels + '<g clip-path="url(#tl-plot)">' + phases() + bd.heads + lanes;
    var s = 4;
    merged(D.world).forEach(function (m) { out += marker(m, WORLD_Y, s, ' world'); });
    if (cursor !== null && cursor >= from && cursor <= to)
      out += '<line id="tl-cursor" class="cursor" data-t-ns="' + cursor + '" x1="' + num(x(cursor)) + '" y1="' + PHASE_Y +
        '" x2="' + num(x(cursor)) + '" y2="' + Math.max(bottom, TOP) + '" data-tip="' + esc('witness at ' + fmtT(cursor)) + '"/>';
    out += '</g>';
    if (!rows.length) out += '<text class="tick" x="8" y="' + (TOP + 16) + '">no tree paths to draw</text>';
    svg.innerHTML = out;
    box.setAttribute('data-from-ns', String(from));
    box.setAttribute('data-to-ns', String(to));
    if (shown) shown.textContent = span(from, to) + (from === 0 && to === end ? ' (the whole run)' : ' of ' + fmtT(end));
  }

  function setWindow(a, b) {
    var w = Math.max(Math.round(b - a), minSpan);
    if (w >= end) { from = 0; to = end; draw(); return; }
    a = Math.round(a);
    if (a < 0) a = 0;
    if (a + w > end) a = end - w;
    from = a; to = a + w;
    draw();
  }
  function zoom(factor, at) {
    if (at === undefined) at = (from + to) / 2;
    var a = at - (at - from) * factor, b = at + (to - at) * factor;
    setWindow(a, b);
  }
  function plotTime(clientX) {
    var px = clientX - svg.getBoundingClientRect().left;
    return from + (clampX(px) - L) / (R - L) * (to - from);
  }
  function focus(ns) {
    if (!(ns >= 0)) return;
    cursor = Math.min(ns, end);
    var w = to - from < end ? to - from : Math.max(end / 10, minSpan);
    setWindow(cursor - w / 2, cursor + w / 2);
    box.scrollIntoView({block: 'nearest'});
  }
  function fromHash() {
    var m = /^#t=(\d+)$/.exec(location.hash);
    if (m) focus(Number(m[1]));
  }

  document.getElementById('zoom-in').addEventListener('click', function () { zoom(0.5); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom(2); });
  document.getElementById('zoom-reset').addEventListener('click', function () { setWindow(0, end); });
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    zoom(e.deltaY < 0 ? 0.8 : 1.25, plotTime(e.clientX));
  }, {passive: false});
  svg.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    drag = {x: e.clientX, from: from, to: to};
    e.preventDefault();
  });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var dt = -(e.clientX - drag.x) / (R - L) * (drag.to - drag.from);
    setWindow(drag.from + dt, drag.to + dt);
  });
  window.addEventListener('mouseup', function () { drag = null; });
  svg.addEventListener('mousemove', function (e) {
    var el = e.target.closest ? e.target.closest('[data-tip]') : null;
    if (!el || drag) { tip.style.display = 'none'; return; }
    tip.textContent = el.getAttribute('data-tip');
    tip.style.display = 'block';
    tip.style.left = (e.pageX + 14) + 'px';
    tip.style.top = (e.pageY + 14) + 'px';
  });
  svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  document.addEventListener('click', function (e) {
    var a = e.target.closest ? e.target.closest('a[href^="#t="]') : null;
    if (a) focus(Number(a.getAttribute('href').slice(3)));
  });
  window.addEventListener('hashchange', fromHash);
  draw();
  fromHash();
})();
