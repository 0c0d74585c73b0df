// The sequence chart of one simulated MQTT run: a lane per node, an arrow
// per packet, the application's events, faults as bands. Only what is near
// the visible part of the chart is in the DOM (render), so a run of
// thousands of events opens at once; zoom changes pixels per event gap.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('seqchart-data').textContent);
  D.packets = D.packets || []; D.marks = D.marks || []; D.spans = D.spans || [];
  D.violations = D.violations || []; D.msgs = D.msgs || []; D.tm = D.tm || [];

  var GUT = 92;          // left gutter (times)
  var TOP = 28;          // space above the first event
  var MINPX = 17;        // least gap between events at different times
  var SAMEPX = 13;       // gap between events at the same virtual time
  var PXMS = 7;          // pixels per virtual millisecond (below the cap)
  var CAPMS = 30;        // longer gaps are drawn as a break
  var BREAKPX = 30;      // a break's height
  var LOSTPX = 30;       // how far down a lost packet's cross is drawn
  var BUCKET = 400;      // the index's bucket height, in pixels
  var PAD = 300;         // render this far beyond the visible part

  var S = { zoom: 1, msg: '', sel: 0, hi: {}, drawn: {} };
  var Y = null, H = 0, laneW = 200, W = 0, breaks = [], items = [], buckets = [];
  var nodeIdx = {};
  D.nodes.forEach(function (n, i) { nodeIdx[n] = i; });
  var broker = nodeIdx.broker === undefined ? -1 : nodeIdx.broker;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }
  // times are shown from the first event (a live run's are wall-clock)
  var T0 = D.tm.length ? D.tm[0] : 0;
  function fmtT(ns) {
    var ms = (ns - T0) / 1e6;
    if (Math.abs(ms) >= 1000) return (ms / 1000).toFixed(3) + ' s';
    return ms.toFixed(3) + ' ms';
  }
  function fmtDur(ns) {
    var ms = ns / 1e6;
    if (ms >= 1000) return '+' + (ms / 1000).toFixed(ms >= 10000 ? 0 : 1) + ' s';
    return '+' + ms.toFixed(0) + ' ms';
  }

  // ---- page ----
  var top = el('header');
  var tb = el('div', { 'class': 'titlebar' });
  tb.appendChild(el('h1', {}, D.title || 'mqttlab run'));
  var lost = D.packets.filter(function (p) { return p.r < 0; }).length;
  tb.appendChild(el('span', { 'class': 'stats' }, D.events + ' events \u00b7 ' + D.packets.length + ' packets (' + lost +
    ' lost) \u00b7 ' + D.nodes.length + ' nodes \u00b7 ' + fmtT(D.end) + ' long'));
  top.appendChild(tb);
  var vbox = el('section', { id: 'violation' });
  top.appendChild(vbox);
  (D.notes || []).forEach(function (n) { top.appendChild(el('div', { 'class': 'notes' }, n)); });
  if (D.replay) {
    var rp = el('div', { 'class': 'replay' }, 'replay: ');
    rp.appendChild(el('code', {}, D.replay));
    top.appendChild(rp);
  }
  var ctl = el('div', { id: 'controls' });
  ctl.innerHTML = '<label>message <input id="msg" list="msgs" placeholder="all messages" autocomplete="off"></label>' +
    '<datalist id="msgs"></datalist><button id="clear" title="show every message">all</button><span class="sep"></span>' +
    '<button id="zout" title="zoom out (ctrl+wheel)">\u2212</button><button id="zin" title="zoom in (ctrl+wheel)">+</button>' +
    '<button id="fit" title="the whole run in the window">fit</button><button id="z1" title="default zoom">1:1</button>' +
    '<span class="sep"></span><span class="legend">' +
    '<span><svg width="34" height="10"><line x1="1" y1="5" x2="28" y2="5" stroke="#2563eb" stroke-width="1.4" marker-end="url(#arr-pub)"/></svg>arrives</span>' +
    '<span><svg width="34" height="10"><line x1="1" y1="5" x2="24" y2="5" stroke="#d32f2f" stroke-width="1.4"/><path class="cross" d="M22 1L30 9M30 1L22 9"/></svg>lost</span>' +
    '<span><svg width="30" height="10"><line x1="1" y1="5" x2="29" y2="5" stroke="#2563eb" stroke-width="1.4" stroke-dasharray="5 3"/></svg>DUP</span>' +
    '<span><svg width="14" height="12"><rect x="4" y="0" width="6" height="12" fill="#93c5fd"/></svg>connected</span>' +
    '<span><svg width="18" height="12"><rect x="1" y="0" width="16" height="12" class="sp down"/></svg>down</span>' +
    '<span><svg width="18" height="12"><rect x="1" y="1" width="16" height="10" class="sp partition"/></svg>partition</span>' +
    '<span><svg width="18" height="12"><rect x="1" y="1" width="16" height="10" fill="#22c55e" fill-opacity=".18"/></svg>liveness</span>' +
    '</span>';
  top.appendChild(ctl);
  var story = el('ul', { 'class': 'story' });
  top.appendChild(story);
  if (D.plan) {
    var det = el('details', { 'class': 'plan' });
    det.appendChild(el('summary', {}, 'plan file'));
    det.appendChild(el('pre', {}, D.plan));
    top.appendChild(det);
  }
  document.body.appendChild(top);
  var head = el('div', { id: 'head' });
  document.body.appendChild(head);
  var chart = el('div', { id: 'chart' });
  document.body.appendChild(chart);
  var tip = el('div', { id: 'tip' });
  document.body.appendChild(tip);
  var dl = document.getElementById('msgs');
  D.msgs.forEach(function (m) { dl.appendChild(el('option', { value: m })); });

  chart.innerHTML = '<svg id="svg" xmlns="http://www.w3.org/2000/svg"><defs>' +
    '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
    '<rect width="6" height="6" fill="#fde8e8"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ef9a9a" stroke-width="2.5"/></pattern>' +
    '<filter id="glow" x="-50%" y="-50%" width="200%" height="200%"><feDropShadow dx="0" dy="0" stdDeviation="2.2" flood-color="#e11d48" flood-opacity=".95"/></filter>' +
    marker('pub', '#2563eb') + marker('ack', '#0f9d76') + marker('conn', '#7b8394') + marker('sub', '#8e44ad') + marker('ping', '#b8bec9') +
    '</defs><g id="bg"></g><g id="fg"></g></svg>';
  // the legend's arrow uses the marker too
  var svg = document.getElementById('svg'), bg = document.getElementById('bg'), fg = document.getElementById('fg');

  function marker(name, color) {
    return '<marker id="arr-' + name + '" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse">' +
      '<path d="M0 0L10 5L0 10z" fill="' + color + '"/></marker>';
  }

  // ---- violation panel ----
  function showViolation() {
    vbox.innerHTML = '';
    if (!D.violations.length) {
      vbox.className = 'ok';
      vbox.innerHTML = '<div class="vhead"><span class="badge">OK</span> no violation of the invariants this run was judged by</div>';
      S.hi = {};
      return;
    }
    var v = D.violations[S.sel];
    vbox.className = 'bad';
    var h = el('div', { 'class': 'vhead' });
    h.appendChild(el('span', { 'class': 'badge', id: 'vinv' }, v.inv));
    h.appendChild(el('span', {}, 'violated' + (v.node ? ' on ' + v.node : '') + ' at step ' + v.step));
    var go = el('button', { id: 'jump' }, 'show on chart');
    go.onclick = function () { jumpTo(v.step); };
    h.appendChild(go);
    vbox.appendChild(h);
    vbox.appendChild(el('div', { 'class': 'reason' }, v.reason));
    if (v.explained) vbox.appendChild(el('div', { 'class': 'explained' }, 'follows from the earlier violation: ' + v.explained));
    var ol = el('ol', { 'class': 'cited' });
    S.hi = {};
    (v.cited || []).forEach(function (c) {
      S.hi[c.i] = true;
      var li = el('li', { 'data-i': c.i });
      li.appendChild(document.createTextNode(c.x + ' '));
      li.appendChild(el('span', { 'class': 'step' }, 'step ' + c.i + ' \u00b7 ' + fmtT(c.t)));
      li.onclick = function () { jumpTo(c.i); };
      ol.appendChild(li);
    });
    vbox.appendChild(ol);
    if (D.violations.length > 1) {
      var o = el('div', { 'class': 'others' }, D.violations.length + ' violations: ');
      var shown = S.allViolations ? D.violations.length : Math.min(D.violations.length, 12);
      D.violations.slice(0, Math.max(shown, S.sel + 1)).forEach(function (w, k) {
        var a = el('a', { 'class': k === S.sel ? 'sel' : '', title: w.explained ? 'follows from ' + w.explained : w.reason }, w.inv + ' @' + w.step);
        a.onclick = function () { S.sel = k; showViolation(); layout(); jumpTo(D.violations[k].step); };
        o.appendChild(a);
      });
      if (shown < D.violations.length) {
        var more = el('a', {}, '+' + (D.violations.length - shown) + ' more');
        more.onclick = function () { S.allViolations = true; showViolation(); };
        o.appendChild(more);
      }
      vbox.appendChild(o);
    }
  }

  // ---- geometry ----
  function X(n) { return GUT + laneW * (n + 0.5); }
  function scale() {
    var z = S.zoom, n = D.tm.length;
    Y = new Float64Array(n);
    breaks = [];
    var y = TOP;
    for (var i = 0; i < n; i++) {
      if (i > 0) {
        var dt = D.tm[i] - D.tm[i - 1];
        if (dt > CAPMS * 1e6) { breaks.push({ y: y, dt: dt }); y += BREAKPX; }
        else if (dt === 0) y += SAMEPX * z;
        else y += Math.max(MINPX * z, dt / 1e6 * PXMS * z);
      }
      Y[i] = y;
    }
    H = y + LOSTPX * z + 60;
  }
  function pktY(p) {
    var y0 = p.s >= 0 ? Y[p.s] : Y[p.r];
    var y1 = p.r >= 0 ? Y[p.r] : y0 + LOSTPX * Math.max(S.zoom, 0.5);
    return [y0, y1];
  }
  function spanY(s) { return [Y[s.i], s.j >= 0 ? Y[s.j] : H - 40]; }

  // items: [kind, index, y0, y1]; kind 0 span, 1 packet, 2 mark, 3 cited
  function layout() {
    scale();
    laneW = Math.max(150, Math.floor((chart.clientWidth - GUT - 24) / Math.max(1, D.nodes.length)));
    W = GUT + laneW * D.nodes.length + 16;
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    items = [];
    D.spans.forEach(function (s, k) { var y = spanY(s); items.push([0, k, y[0], y[1]]); });
    D.packets.forEach(function (p, k) { var y = pktY(p); items.push([1, k, y[0], y[1]]); });
    D.marks.forEach(function (m, k) { items.push([2, k, Y[m.i], Y[m.i]]); });
    var v = D.violations[S.sel];
    if (v) (v.cited || []).forEach(function (c, k) { items.push([3, k, Y[c.i], Y[c.i]]); });
    buckets = [];
    items.forEach(function (it, id) {
      for (var b = Math.floor(it[2] / BUCKET); b <= Math.floor(it[3] / BUCKET); b++) (buckets[b] = buckets[b] || []).push(id);
    });
    head.innerHTML = '';
    D.nodes.forEach(function (n, i) {
      var d = el('div', { 'class': 'lane' + (i === broker ? ' broker' : '') }, n);
      d.style.left = (X(i) - laneW * 0.35) + 'px';
      d.style.width = (laneW * 0.7) + 'px';
      head.appendChild(d);
    });
    render();
  }

  // ---- drawing ----
  function typeClass(t) {
    if (t === 'PUBLISH') return 't-pub';
    if (t === 'PUBACK' || t === 'PUBREC' || t === 'PUBREL' || t === 'PUBCOMP') return 't-ack';
    if (t === 'SUBSCRIBE' || t === 'SUBACK' || t === 'UNSUBSCRIBE' || t === 'UNSUBACK') return 't-sub';
    if (t === 'PINGREQ' || t === 'PINGRESP') return 't-ping';
    return 't-conn';
  }
  function dim(m) { return S.msg && m !== S.msg ? ' dim' : ''; }
  function pktLabel(p) {
    var s = p.ty;
    if (p.id) s += ' ' + p.id;
    if (p.ty === 'PUBLISH') s += ' q' + (p.q || 0) + (p.d ? ' dup' : '') + (p.m ? ' ' + p.m : '');
    if (p.ty === 'CONNACK') s += ' sp=' + (p.sp ? 1 : 0);
    if (p.ty === 'CONNECT' && p.sp) s += ' clean';
    if (p.ty === 'SUBACK' && p.rc < 0x80) s += ' q' + p.rc;
    else if (p.rc) s += ' 0x' + p.rc.toString(16);
    return s;
  }
  function drawPacket(k, out) {
    var p = D.packets[k], y = pktY(p), x1 = X(p.f), x2 = X(p.t);
    var hit = S.hi[p.s] || S.hi[p.r];
    var tc = typeClass(p.ty);
    var cls = 'pkt ' + tc + (p.d ? ' dup' : '') + (p.r < 0 ? ' lost' : '') + (hit ? ' cited-el' : '') + dim(p.m);
    var dir = x2 > x1 ? 1 : -1;
    var xa = x1 + dir * 3, xb, yb = y[1];
    var g = '<g class="' + cls + '" data-p="' + k + '">';
    if (p.r < 0) {
      xb = x1 + (x2 - x1) * 0.55;
      g += '<line class="a" x1="' + xa + '" y1="' + y[0] + '" x2="' + xb + '" y2="' + yb + '"/>' +
        '<path class="cross" d="M' + (xb - 5) + ' ' + (yb - 5) + 'L' + (xb + 5) + ' ' + (yb + 5) + 'M' + (xb + 5) + ' ' + (yb - 5) + 'L' + (xb - 5) + ' ' + (yb + 5) + '"/>';
    } else {
      xb = x2 - dir * 4;
      g += '<line class="a" x1="' + xa + '" y1="' + y[0] + '" x2="' + xb + '" y2="' + yb + '" marker-end="url(#arr-' + tc.slice(2) + ')"/>';
    }
    g += '<line class="hit" x1="' + xa + '" y1="' + y[0] + '" x2="' + xb + '" y2="' + yb + '"/>';
    if (S.zoom >= 0.55 || hit) {
      var tx = xa + (xb - xa) * 0.5, ty = y[0] + (yb - y[0]) * 0.5 - 3;
      g += '<text x="' + tx + '" y="' + ty + '" text-anchor="middle">' + esc(pktLabel(p)) + '</text>';
    }
    out.push(g + '</g>');
    S.drawn[k] = true;
  }
  function drawMark(k, out) {
    var m = D.marks[k], y = Y[m.i], hit = S.hi[m.i];
    // With a message filter on, its own events stand out and the faults stay
    // as context; the rest dims.
    var appEv = m.k === 'accepted' || m.k === 'delivered' || m.k === 'acked' || m.k === 'subscribed' || m.k === 'connected';
    var cls = 'mk ' + m.k + (hit ? ' cited-el' : '') + (appEv ? dim(m.m) : '');
    var g = '<g class="' + cls + '" data-m="' + k + '">';
    if (m.n < 0) {
      g += '<line x1="' + GUT + '" y1="' + y + '" x2="' + (W - 10) + '" y2="' + y + '"/>' +
        '<text x="' + (GUT + 6) + '" y="' + (y - 4) + '">' + esc(m.l) + '</text>';
      return out.push(g + '</g>');
    }
    var x = X(m.n), lx = x + 10, anchor = 'start';
    if (m.n === D.nodes.length - 1 && D.nodes.length > 1) { lx = x - 10; anchor = 'end'; }
    switch (m.k) {
      case 'accepted': case 'delivered': case 'acked':
        g += '<circle cx="' + x + '" cy="' + y + '" r="' + (m.k === 'acked' ? 3.5 : 5) + '"/>'; break;
      case 'subscribed': g += '<rect x="' + (x - 4) + '" y="' + (y - 4) + '" width="8" height="8"/>'; break;
      case 'connected': g += '<rect x="' + (x - 7) + '" y="' + (y - 1.5) + '" width="14" height="3"/>'; break;
      case 'crash': g += '<path d="M' + (x - 7) + ' ' + (y - 7) + 'L' + (x + 7) + ' ' + (y + 7) + 'M' + (x + 7) + ' ' + (y - 7) + 'L' + (x - 7) + ' ' + (y + 7) + '"/>'; lx = x + 14; break;
      case 'restart': g += '<path d="M' + (x - 6) + ' ' + (y + 5) + 'L' + x + ' ' + (y - 6) + 'L' + (x + 6) + ' ' + (y + 5) + 'z"/>'; break;
      case 'cut':
        var bx = broker >= 0 ? X(broker) : x, a = Math.min(x, bx) + 8, b = Math.max(x, bx) - 8, d = 'M' + a + ' ' + y;
        for (var zx = a, up = true; zx < b; zx += 8, up = !up) d += 'L' + Math.min(zx + 8, b) + ' ' + (y + (up ? -4 : 4));
        g += '<path d="' + d + '"/>';
        if (x < bx) { lx = a; anchor = 'start'; } else { lx = b; anchor = 'end'; }
        y -= 11;
        break;
      case 'failed': g += '<rect x="' + (x - 5) + '" y="' + (y - 5) + '" width="10" height="10"/>'; break;
      default: g += '<path d="M' + x + ' ' + (y - 6) + 'L' + (x + 6) + ' ' + y + 'L' + x + ' ' + (y + 6) + 'L' + (x - 6) + ' ' + y + 'z"/>';
    }
    if (S.zoom >= 0.45 || hit || m.k === 'crash' || m.k === 'cut') {
      g += '<text x="' + lx + '" y="' + (y + 3.5) + '" text-anchor="' + anchor + '">' + esc(m.l) + '</text>';
    }
    out.push(g + '</g>');
  }
  function drawSpan(k, out) {
    var s = D.spans[k], y = spanY(s), h = Math.max(1, y[1] - y[0]);
    var g = '<g data-s="' + k + '"' + (S.hi[s.i] ? ' class="cited-el"' : '') + '>';
    if (s.k === 'conn') {
      var x = X(s.n), w = 6, off = 0;
      if (s.n === broker) { w = 3; off = (s.p < broker ? -1 : 1) * (5 + 4 * Math.abs(s.p - broker)); }
      g += '<rect class="sp conn" x="' + (x + off - w / 2) + '" y="' + y[0] + '" width="' + w + '" height="' + h + '" rx="1.5"/>';
    } else if (s.k === 'down') {
      g += '<rect class="sp down" x="' + (X(s.n) - 12) + '" y="' + y[0] + '" width="24" height="' + h + '" rx="3"/>';
    } else if (s.k === 'partition') {
      var a = Math.min(X(s.n), X(broker)), b = Math.max(X(s.n), X(broker));
      g += '<rect class="sp partition" x="' + a + '" y="' + y[0] + '" width="' + (b - a) + '" height="' + h + '"/>' +
        '<text class="sp-label partition" x="' + ((a + b) / 2) + '" y="' + (y[0] + 12) + '" text-anchor="middle">partition: ' + esc(D.nodes[s.n]) + ' cut off</text>';
    } else if (s.k === 'liveness') {
      g += '<rect class="sp liveness" x="' + GUT + '" y="' + y[0] + '" width="' + (W - GUT) + '" height="' + h + '"/>' +
        '<line class="live-line" x1="' + GUT + '" y1="' + y[0] + '" x2="' + W + '" y2="' + y[0] + '"/>' +
        '<text class="sp-label liveness" x="' + (W - 12) + '" y="' + (y[0] + 13) + '" text-anchor="end">' + esc(s.l) + '</text>';
    }
    out.push(g + '</g>');
  }
  function drawCited(k, out) {
    var c = D.violations[S.sel].cited[k], y = Y[c.i];
    var x = c.n >= 0 ? X(c.n) : GUT + 30;
    out.push('<g class="cite" data-c="' + k + '"><circle class="cite-ring" cx="' + x + '" cy="' + y + '" r="10"/>' +
      '<text class="cite-tag" x="' + (x - 14) + '" y="' + (y - 8) + '" text-anchor="end">step ' + c.i + '</text></g>');
  }

  function render() {
    var y0 = chart.scrollTop - PAD, y1 = chart.scrollTop + chart.clientHeight + PAD;
    var seen = {}, ids = [];
    for (var b = Math.max(0, Math.floor(y0 / BUCKET)); b <= Math.floor(y1 / BUCKET); b++) {
      (buckets[b] || []).forEach(function (id) {
        if (seen[id]) return;
        seen[id] = true;
        var it = items[id];
        if (it[3] >= y0 && it[2] <= y1) ids.push(id);
      });
    }
    ids.sort(function (a, c) { return a - c; });
    var back = [], front = [], cites = [];
    // lanes and the time gutter
    D.nodes.forEach(function (n, i) {
      back.push('<line class="lane-line' + (i === broker ? ' broker' : '') + '" x1="' + X(i) + '" y1="' + Math.max(0, y0) + '" x2="' + X(i) + '" y2="' + Math.min(H, y1) + '"/>');
    });
    var last = -1e9, lastT = NaN;
    for (var i = lowerY(y0); i < Y.length && Y[i] <= y1; i++) {
      if (Y[i] - last < 46 || D.tm[i] === lastT) continue;
      last = Y[i];
      lastT = D.tm[i];
      back.push('<text class="gut" x="6" y="' + (Y[i] + 3) + '">' + fmtT(D.tm[i]) + '</text>');
    }
    breaks.forEach(function (br) {
      if (br.y < y0 || br.y > y1) return;
      var m = br.y + BREAKPX / 2;
      back.push('<g class="brk"><line x1="' + GUT + '" y1="' + m + '" x2="' + W + '" y2="' + m + '"/><text x="6" y="' + (m + 3) + '">\u22ef ' + fmtDur(br.dt) + '</text></g>');
    });
    ids.forEach(function (id) {
      var it = items[id];
      if (it[0] === 0) drawSpan(it[1], back);
      else if (it[0] === 1) drawPacket(it[1], front);
      else if (it[0] === 2) drawMark(it[1], front);
      else drawCited(it[1], cites);
    });
    bg.innerHTML = back.join('');
    fg.innerHTML = front.join('') + cites.join('');
  }
  function lowerY(y) {
    var lo = 0, hi = Y.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (Y[mid] < y) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // ---- interaction ----
  var pending = false;
  chart.addEventListener('scroll', function () {
    head.scrollLeft = chart.scrollLeft;
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  });
  window.addEventListener('resize', function () { layout(); });

  function jumpTo(i) {
    if (i < 0 || i >= Y.length) return;
    chart.scrollTop = Math.max(0, Y[i] - chart.clientHeight / 3);
    render();
    var ring = fg.querySelector('.cite-ring');
    fg.querySelectorAll('.cite').forEach(function (g) {
      var c = D.violations[S.sel] && D.violations[S.sel].cited[+g.getAttribute('data-c')];
      if (c && c.i === i) g.querySelector('circle').classList.add('flash');
    });
    return ring;
  }
  function zoomTo(z, anchorY) {
    z = Math.min(8, Math.max(0.05, z));
    var ay = anchorY === undefined ? chart.clientHeight / 2 : anchorY;
    var i = Math.min(Y.length - 1, lowerY(chart.scrollTop + ay));
    var before = Y.length ? Y[i] - chart.scrollTop : 0;
    S.zoom = z;
    layout();
    if (Y.length) chart.scrollTop = Math.max(0, Y[i] - before);
    render();
  }
  document.getElementById('zin').onclick = function () { zoomTo(S.zoom * 1.5); };
  document.getElementById('zout').onclick = function () { zoomTo(S.zoom / 1.5); };
  document.getElementById('z1').onclick = function () { zoomTo(1); };
  document.getElementById('fit').onclick = function () {
    var fixed = TOP + breaks.length * BREAKPX + 60, z = S.zoom;
    for (var k = 0; k < 3; k++) { S.zoom = z; scale(); z = z * Math.max(1, chart.clientHeight - fixed) / Math.max(1, H - fixed); }
    zoomTo(z, 0);
    chart.scrollTop = 0;
    render();
  };
  chart.addEventListener('wheel', function (e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    zoomTo(S.zoom * (e.deltaY < 0 ? 1.2 : 1 / 1.2), e.clientY - chart.getBoundingClientRect().top);
  }, { passive: false });

  var input = document.getElementById('msg');
  function setMsg(m) {
    S.msg = D.msgs.indexOf(m) >= 0 ? m : '';
    if (input.value !== m) input.value = S.msg;
    showStory();
    render();
  }
  input.addEventListener('input', function () { setMsg(input.value.trim()); });
  document.getElementById('clear').onclick = function () { setMsg(''); };

  // showStory lists every event of the filtered message, across nodes.
  function showStory() {
    story.innerHTML = '';
    if (!S.msg) return;
    var rows = [];
    D.packets.forEach(function (p) {
      if (p.m !== S.msg) return;
      var at = p.s >= 0 ? p.s : p.r;
      rows.push([at, D.nodes[p.f] + ' \u2192 ' + D.nodes[p.t] + ' ' + pktLabel(p) + (p.r < 0 ? ' \u2716 lost' : '')]);
    });
    D.marks.forEach(function (m) { if (m.m === S.msg) rows.push([m.i, D.nodes[m.n] + ': ' + m.l]); });
    rows.sort(function (a, b) { return a[0] - b[0]; });
    rows.forEach(function (r) {
      var li = el('li');
      li.appendChild(document.createTextNode(r[1] + ' '));
      li.appendChild(el('span', { 'class': 'step' }, fmtT(D.tm[r[0]])));
      li.onclick = function () { jumpTo(r[0]); };
      story.appendChild(li);
    });
    if (!rows.length) story.appendChild(el('li', {}, 'no event of ' + S.msg));
  }

  function tipText(t) {
    var g = t.closest('[data-p],[data-m],[data-s],[data-c]');
    if (!g) return '';
    if (g.hasAttribute('data-p')) {
      var p = D.packets[+g.getAttribute('data-p')];
      var s = '<b>' + esc(p.ty) + '</b>' + (p.id ? ' id ' + p.id : '') + (p.ty === 'PUBLISH' ? ' \u00b7 QoS ' + (p.q || 0) + ' \u00b7 DUP ' + (p.d ? 1 : 0) : '') +
        (p.rc ? ' \u00b7 reason 0x' + p.rc.toString(16) : '') + '\n' + esc(D.nodes[p.f]) + ' \u2192 ' + esc(D.nodes[p.t]);
      if (p.tp) s += '\n' + (p.ty === 'PUBLISH' ? 'topic ' : 'filter ') + esc(p.tp);
      if (p.m) s += '\nmessage ' + esc(p.m) + ' (click: follow it)';
      if (p.ty === 'CONNACK') s += '\nsession present ' + (p.sp ? 1 : 0);
      if (p.ty === 'CONNECT') s += '\nclean start ' + (p.sp ? 1 : 0);
      s += '\nsent ' + (p.s >= 0 ? fmtT(p.st) + ' (step ' + p.s + ')' : 'not recorded');
      s += '\n' + (p.r >= 0 ? 'received ' + fmtT(p.rt) + ' (step ' + p.r + ')' : esc(p.lost || 'lost'));
      return s;
    }
    if (g.hasAttribute('data-m')) {
      var m = D.marks[+g.getAttribute('data-m')];
      return '<b>' + esc(m.l) + '</b>\n' + esc(m.dt || '') + '\n' + (m.n >= 0 ? esc(D.nodes[m.n]) + ' \u00b7 ' : '') + fmtT(m.t) + ' (step ' + m.i + ')';
    }
    if (g.hasAttribute('data-s')) {
      var sp = D.spans[+g.getAttribute('data-s')];
      var what = { conn: 'connection ' + D.nodes[sp.n] + ' \u2194 ' + (D.nodes[sp.p] || ''), down: D.nodes[sp.n] + ' down: ' + sp.l,
        partition: 'partition: ' + D.nodes[sp.n] + ' cut off from the broker', liveness: sp.l }[sp.k];
      return '<b>' + esc(what) + '</b>\n' + fmtT(sp.a) + ' \u2013 ' + fmtT(sp.b) + ' (steps ' + sp.i + (sp.j >= 0 ? '\u2013' + sp.j : '\u2013end') + ')';
    }
    var c = D.violations[S.sel].cited[+g.getAttribute('data-c')];
    return '<b>cited by ' + esc(D.violations[S.sel].inv) + '</b>\n' + esc(c.x) + '\nstep ' + c.i + ' \u00b7 ' + fmtT(c.t);
  }
  chart.addEventListener('mousemove', function (e) {
    var s = tipText(e.target);
    if (!s) { tip.style.display = 'none'; return; }
    tip.innerHTML = s;
    tip.style.display = 'block';
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 8) x = e.clientX - tip.offsetWidth - 14;
    if (y + tip.offsetHeight > window.innerHeight - 8) y = e.clientY - tip.offsetHeight - 14;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  });
  chart.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  chart.addEventListener('click', function (e) {
    var g = e.target.closest('[data-p],[data-m]');
    if (!g) return;
    var m = g.hasAttribute('data-p') ? D.packets[+g.getAttribute('data-p')].m : D.marks[+g.getAttribute('data-m')].m;
    if (m) setMsg(S.msg === m ? '' : m);
  });

  showViolation();
  layout();
  if (D.violations.length) {
    jumpTo(D.violations[0].step);
  }
  // for tests and measurements
  window.seqchart = {
    data: D, state: S,
    renderAt: function (y) { chart.scrollTop = y; render(); return chart.scrollTop; },
    jumpTo: jumpTo, setMsg: setMsg, zoomTo: zoomTo,
    height: function () { return H; }
  };
  document.body.setAttribute('data-ready', '1');
  if (window.performance && performance.mark) {
    performance.mark('seqchart-ready');
    // the frame after the first one drawn: the chart is on screen
    requestAnimationFrame(function () { requestAnimationFrame(function () { performance.mark('seqchart-painted'); }); });
  }
})();
