/* report_explore.js - the explorer of spanfold report's page: brush a time range on
 * a timeline, or click an endpoint, and the CPU of exactly those requests is folded
 * here, from the data embedded in the page (report_explore.c documents it), with no
 * server and nothing fetched.  Views: the selection's flame graph, its differential
 * against every other request, the sandwich of one function (its callers and its
 * callees); the selection's slowest requests, and one request's timeline (its phases
 * on the wire, its samples and off-CPU intervals in time order, its markers).  Each
 * view is of the CPU samples or, where the page carries them, of the off-CPU intervals
 * (the time the requests' threads waited, by the stack that blocked).  The URL fragment
 * holds the view (#from=ISO&to=ISO&ep=NAME&what=offcpu&view=flame|diff|sandwich&fn=NAME
 * &span=ID) so that a link to it can be shared; Escape clears, the arrow keys move a
 * range by its width.
 *
 * Captured strings are data: they reach the document only as text nodes and
 * attribute values (textContent, setAttribute), never as markup.
 */
'use strict';
(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  const FW = 1200, FH = 17, MINW = 0.4; /* flame graph: width, frame height, px drawn */
  const $ = (id) => document.getElementById(id);
  const st = { from: null, to: null, ep: null, what: 'cpu', view: 'flame', fn: null, span: null, zoom: 0 };
  let D = null;
  let T = null; /* the stack trie: parent, frame, kids (sorted by name) */
  const all = {}; /* per kind of rows (cpu, offcpu): self weight of every attributed row, per node */
  /* the rows the views are of: the CPU samples (the data's top level) or off-CPU intervals */
  const rows = () => (st.what === 'offcpu' ? D.off : D);
  const unit = () => (st.what === 'offcpu' ? 'ns' : D.unit);
  let inView = false; /* the explorer is on screen: the floating summary is not needed */

  /* ---- data ---- */

  async function load() {
    const el = $('sf-explore-data');
    const b64 = el.textContent.replace(/\s+/g, '');
    const raw = atob(b64);
    const bin = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bin[i] = raw.charCodeAt(i);
    let text;
    if (el.dataset.format === 'deflate+base64') {
      const s = new Blob([bin]).stream().pipeThrough(new DecompressionStream('deflate'));
      text = await new Response(s).text();
    } else text = new TextDecoder().decode(bin);
    D = JSON.parse(text);
    for (const k of ['dur', 'req', 'srv', 'resp', 'hs']) /* us in the data, ms here */
      D.span[k] = D.span[k].map((v) => (v === null ? null : v / 1e3));
    trie();
  }

  function trie() {
    const nn = D.nodes.length / 2 + 1;
    const parent = new Int32Array(nn), frame = new Int32Array(nn), depth = new Int32Array(nn);
    parent[0] = -1;
    frame[0] = -1;
    for (let i = 1; i < nn; i++) {
      parent[i] = D.nodes[2 * (i - 1)];
      frame[i] = D.nodes[2 * (i - 1) + 1];
      depth[i] = depth[parent[i]] + 1; /* a parent is made before its children */
    }
    const kids = Array.from({ length: nn }, () => []);
    for (let i = 1; i < nn; i++) kids[parent[i]].push(i);
    const name = (i) => (i === 0 ? 'all' : D.frames[frame[i]]);
    for (const k of kids) k.sort((a, b) => cmpStr(name(a), name(b)));
    T = { n: nn, parent, frame, depth, kids, name };
    for (const [what, R] of [['cpu', D], ['offcpu', D.off]]) {
      all[what] = new Float64Array(nn);
      for (let k = 0; k < R.node.length; k++) all[what][R.node[k]] += R.w[k];
    }
  }

  /* Code point order, which is UTF-8 byte order (the CLI sorts bytes). */
  function cmpStr(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a.charCodeAt(i), y = b.charCodeAt(i);
      if (x !== y) {
        const sx = x >= 0xd800 && x <= 0xdfff, sy = y >= 0xd800 && y <= 0xdfff;
        return sx !== sy ? (sx ? 1 : -1) : x - y;
      }
    }
    return a.length - b.length;
  }

  /* ---- the selection ---- */

  const toNs = (ms) => (ms - D.base_ms) * 1e6; /* exact: both whole ms */

  /* First span index whose start is >= t (ns after base_ms). */
  function lower(t) {
    let lo = 0, hi = D.span.start.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (D.span.start[m] < t) lo = m + 1; else hi = m;
    }
    return lo;
  }

  function selected() {
    const lo = st.from === null ? 0 : lower(toNs(st.from));
    const hi = st.to === null ? D.span.start.length : lower(toNs(st.to));
    const ep = st.ep === null ? -1 : D.eps.indexOf(st.ep);
    const out = [];
    for (let s = lo; s < hi; s++) if (ep < 0 || D.span.ep[s] === ep) out.push(s);
    return out;
  }

  function selfOf(spans) {
    const self = new Float64Array(T.n);
    const R = rows();
    for (const s of spans) for (let k = R.at[s]; k < R.at[s + 1]; k++) self[R.node[k]] += R.w[k];
    return self;
  }

  function cumOf(self) {
    const cum = Float64Array.from(self);
    for (let i = T.n - 1; i > 0; i--) cum[T.parent[i]] += cum[i];
    return cum;
  }

  const paths = [];
  function pathOf(i) {
    if (paths[i] === undefined) {
      const p = [];
      for (let j = i; j > 0; j = T.parent[j]) p.push(D.frames[T.frame[j]]);
      paths[i] = p.reverse().join(';');
    }
    return paths[i];
  }

  function foldedOf(self) {
    const lines = [];
    for (let i = 1; i < T.n; i++) if (self[i] > 0) lines.push([pathOf(i), self[i]]);
    lines.sort((a, b) => cmpStr(a[0], b[0]));
    return lines.map((l) => l[0] + ' ' + l[1] + '\n').join('');
  }

  /* The selection's samples whose stack holds frame fn: their weight (each sample once,
   * however often fn recurs in it), of those where fn is the leaf, and the callers' and
   * callees' trees of fn's outermost occurrence. */
  function sandwichOf(self, fn) {
    const k = D.frames.indexOf(fn);
    const outer = new Int32Array(T.n).fill(-1); /* the outermost node of frame k above i */
    let total = 0, leaf = 0;
    const callers = new Map(), callees = new Map();
    for (let i = 1; i < T.n; i++) {
      const p = T.parent[i];
      outer[i] = p > 0 && outer[p] >= 0 ? outer[p] : T.frame[i] === k ? i : -1;
    }
    for (let i = 1; i < T.n; i++) {
      if (self[i] <= 0 || outer[i] < 0) continue;
      total += self[i];
      if (T.frame[i] === k) leaf += self[i];
      const up = [];
      for (let j = outer[i]; j > 0; j = T.parent[j]) up.push(D.frames[T.frame[j]]);
      const down = [];
      for (let j = i; j !== outer[i]; j = T.parent[j]) down.push(D.frames[T.frame[j]]);
      down.push(fn);
      const ku = up.join(';'), kd = down.reverse().join(';');
      callers.set(ku, (callers.get(ku) || 0) + self[i]);
      callees.set(kd, (callees.get(kd) || 0) + self[i]);
    }
    return { total, self: leaf, callers, callees };
  }

  /* A tree of folded paths (Map "a;b;c" -> weight), for the sandwich's two graphs. */
  function treeOf(map) {
    const parent = [-1], names = ['all'], cum = [0], index = new Map();
    for (const [key, w] of map) {
      let node = 0;
      cum[0] += w;
      for (const f of key.split(';')) {
        const id = node + '\u0000' + f;
        let c = index.get(id);
        if (c === undefined) {
          c = parent.length;
          index.set(id, c);
          parent.push(node);
          names.push(f);
          cum.push(0);
        }
        cum[c] += w;
        node = c;
      }
    }
    const kids = Array.from({ length: parent.length }, () => []);
    for (let i = 1; i < parent.length; i++) kids[parent[i]].push(i);
    for (const k of kids) k.sort((a, b) => cmpStr(names[a], names[b]));
    return { n: parent.length, parent, kids, name: (i) => names[i], cum };
  }

  /* ---- drawing ---- */

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function hue(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function warm(name) {
    const h = hue(name);
    return `rgb(${205 + (h % 50)},${80 + ((h >>> 8) % 130)},${(h >>> 16) % 55})`;
  }

  function weightText(w) {
    if (unit() !== 'ns') return Math.round(w) + ' ' + unit();
    return w >= 1e9 ? (w / 1e9).toFixed(2) + ' s' : (w / 1e6).toFixed(1) + ' ms';
  }

  /* Draw tree t (cum: weights) into svg, zoomed on node zoom, classic orientation (the
   * root at the bottom).  color(i) gives a frame's fill, extra(i) text for its title. */
  function flame(svg, t, cum, zoom, color, extra, onclick) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    let maxd = 0;
    const boxes = [];
    const chain = [];
    for (let j = zoom; j >= 0; j = t.parent[j]) chain.push(j);
    chain.reverse(); /* the zoomed frame's ancestors, drawn full width */
    chain.forEach((j, d) => boxes.push([j, d, 0, FW]));
    const tot = cum[zoom];
    if (!(tot > 0)) {
      svg.setAttribute('viewBox', `0 0 ${FW} 40`);
      svg.setAttribute('height', 40);
      el('text', { x: 10, y: 24 }, svg).textContent = 'No samples in this selection.';
      return;
    }
    const stack = [[zoom, chain.length - 1, 0]];
    while (stack.length) {
      const [i, d, x] = stack.pop();
      let cx = x;
      for (const c of t.kids[i]) {
        const w = (cum[c] / tot) * FW;
        if (w >= MINW) {
          boxes.push([c, d + 1, cx, w]);
          stack.push([c, d + 1, cx]);
          if (d + 1 > maxd) maxd = d + 1;
        }
        cx += w;
      }
    }
    maxd = Math.max(maxd, chain.length - 1);
    const H = (maxd + 1) * FH + 4;
    svg.setAttribute('viewBox', `0 0 ${FW} ${H}`);
    svg.setAttribute('height', H);
    const all = cum[0];
    for (const [i, d, x, w] of boxes) {
      const g = el('g', { class: 'fr' }, svg);
      const nm = t.name(i);
      el('title', {}, g).textContent =
        `${nm} (${Math.round(cum[i])} ${unit()}, ${((100 * cum[i]) / all).toFixed(2)} %${extra ? extra(i) : ''})`;
      const y = H - (d + 1) * FH;
      el('rect', { x: x.toFixed(2), y, width: Math.max(w - 0.5, 0.1).toFixed(2), height: FH - 1,
                   fill: i === 0 ? 'rgb(220,220,220)' : color(i), rx: 2 }, g);
      if (w > 30) {
        const chars = Math.floor((w - 6) / 7);
        const tx = el('text', { x: (x + 3).toFixed(2), y: y + FH - 5 }, g);
        tx.textContent = nm.length <= chars ? nm : nm.slice(0, Math.max(chars - 2, 0)) + '..';
      }
      g.addEventListener('click', (ev) => onclick(i, ev));
    }
  }

  function drawFlame(sel, selSelf) {
    const svg = $('ex-flame');
    const cum = cumOf(selSelf);
    const zoom = st.zoom < T.n && cum[st.zoom] > 0 ? st.zoom : 0;
    const click = (i) => {
      st.zoom = i === zoom ? T.parent[i] < 0 ? 0 : T.parent[i] : i;
      if (i > 0) st.fn = T.name(i);
      update();
    };
    if (st.view === 'diff') {
      const rest = cumOf(all[st.what].map((v, i) => v - selSelf[i]));
      const ts = cum[0], tr = rest[0];
      const delta = (i) => (ts > 0 ? cum[i] / ts : 0) - (tr > 0 ? rest[i] / tr : 0);
      const color = (i) => {
        const d = delta(i), a = Math.min(1, Math.abs(d) * 5);
        const c = Math.round(255 - 190 * a);
        return d > 0 ? `rgb(255,${c},${c})` : d < 0 ? `rgb(${c},${c},255)` : 'rgb(250,250,250)';
      };
      flame(svg, T, cum, zoom, color, (i) => `, ${(100 * delta(i)).toFixed(2)} pt against the rest`, click);
    } else flame(svg, T, cum, zoom, (i) => warm(T.name(i)), null, click);
    return cum;
  }

  function drawSandwich(selSelf) {
    const box = $('ex-sandwich');
    box.hidden = st.view !== 'sandwich';
    if (box.hidden) return;
    const fn = st.fn;
    if (fn === null || D.frames.indexOf(fn) < 0) {
      $('ex-sandwich-total').textContent = 'Click a frame of the flame graph first: its function is the one shown here.';
      for (const id of ['ex-callers', 'ex-callees']) flame($(id), treeOf(new Map()), [0], 0, warm, null, () => {});
      return;
    }
    const sw = sandwichOf(selSelf, fn);
    $('ex-sandwich-total').textContent =
      `${fn}: ${sw.total} ${unit()} in the selection (${weightText(sw.total)}), ${sw.self} ${unit()} of it in the function itself.`;
    const up = treeOf(sw.callers), down = treeOf(sw.callees);
    const noop = () => {};
    flame($('ex-callers'), up, up.cum, 0, (i) => warm(up.name(i)), null, noop);
    flame($('ex-callees'), down, down.cum, 0, (i) => warm(down.name(i)), null, noop);
  }

  const iso = (ms) => new Date(ms).toISOString();
  const fmt = (v) => (v === null ? '\u2014' : v.toFixed(1));

  function spanWeight(R, s) {
    let w = 0;
    for (let k = R.at[s]; k < R.at[s + 1]; k++) w += R.w[k];
    return w;
  }
  const msText = (ns) => (ns / 1e6).toFixed(1) + ' ms';

  function drawSlowest(sel) {
    const tb = $('ex-slowest');
    while (tb.firstChild) tb.removeChild(tb.firstChild);
    const head = document.createElement('tr');
    const hasOff = D.off.node.length > 0;
    for (const h of ['endpoint', 'started', 'duration ms', 'request ms', 'server ms', 'response ms', 'CPU',
                     ...(hasOff ? ['off CPU'] : []), 'span id']) {
      const th = document.createElement('th');
      th.textContent = h;
      head.appendChild(th);
    }
    tb.appendChild(head);
    const top = sel.filter((s) => D.span.dur[s] !== null).sort((a, b) => D.span.dur[b] - D.span.dur[a]).slice(0, 10);
    for (const s of top) {
      const tr = document.createElement('tr');
      tr.dataset.span = D.span.id[s];
      tr.tabIndex = 0;
      if (st.span === D.span.id[s]) tr.className = 'on';
      const cells = [D.eps[D.span.ep[s]], iso(D.base_ms + D.span.start[s] / 1e6), fmt(D.span.dur[s]),
                     fmt(D.span.req[s]), fmt(D.span.srv[s]), fmt(D.span.resp[s]),
                     D.unit === 'ns' ? msText(spanWeight(D, s)) : spanWeight(D, s) + ' ' + D.unit,
                     ...(hasOff ? [msText(spanWeight(D.off, s))] : []), D.span.id[s]];
      cells.forEach((c, k) => {
        const td = document.createElement('td');
        td.textContent = c;
        if (k >= 2 && k < cells.length - 1) td.className = 'n';
        tr.appendChild(td);
      });
      const open = () => { st.span = D.span.id[s]; update(); $('ex-request').scrollIntoView({ block: 'nearest' }); };
      tr.addEventListener('click', open);
      tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(); });
      tb.appendChild(tr);
    }
  }

  /* One request: its phases on the wire, its samples in time order, its markers. */
  function drawRequest() {
    const box = $('ex-request');
    const s = st.span === null ? -1 : D.span.id.indexOf(st.span);
    box.hidden = s < 0;
    if (s < 0) return;
    const svg = $('ex-request-svg');
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const W = 1100, L = 90, R = 20, dur = D.span.dur[s] || 0;
    const marks = [];
    for (let k = 0; k < D.marks.span.length; k++) if (D.marks.span[k] === s) marks.push(k);
    let end = dur;
    for (let k = D.at[s]; k < D.at[s + 1]; k++) if (D.dt[k] !== null) end = Math.max(end, D.dt[k] / 1e3);
    for (const k of marks) if (D.marks.dt[k] !== null) end = Math.max(end, D.marks.dt[k] / 1e3);
    const O = D.off;
    for (let k = O.at[s]; k < O.at[s + 1]; k++) if (O.dt[k] !== null) end = Math.max(end, O.dt[k] / 1e3 + O.w[k] / 1e6);
    let beg = D.span.hs[s] !== null ? -D.span.hs[s] : 0;
    for (let k = D.at[s]; k < D.at[s + 1]; k++) if (D.dt[k] !== null) beg = Math.min(beg, D.dt[k] / 1e3);
    for (const k of marks) if (D.marks.dt[k] !== null) beg = Math.min(beg, D.marks.dt[k] / 1e3);
    const span = end - beg || 1;
    const x = (ms) => L + ((ms - beg) / span) * (W - L - R);
    const H = 190;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('height', H);
    const label = (y, t) => { el('text', { x: 4, y, class: 'tl' }, svg).textContent = t; };
    label(28, 'on the wire');
    label(68, 'samples');
    label(108, 'off CPU');
    label(148, 'markers');
    const ph = [['handshake', D.span.hs[s] === null ? null : -D.span.hs[s], D.span.hs[s], '#ced4da'],
                ['request', 0, D.span.req[s], '#74c0fc'], ['server', D.span.req[s], D.span.srv[s], '#ffa94d'],
                ['response', (D.span.req[s] || 0) + (D.span.srv[s] || 0), D.span.resp[s], '#8ce99a']];
    for (const [name, at, len, color] of ph) {
      if (at === null || len === null) continue;
      const r = el('rect', { class: 'phase', 'data-phase': name, x: x(at), y: 14, width: Math.max(x(at + len) - x(at), 1),
                             height: 20, fill: color }, svg);
      el('title', {}, r).textContent = `${name}: ${len.toFixed(3)} ms`;
    }
    for (let k = D.at[s]; k < D.at[s + 1]; k++) {
      if (D.dt[k] === null) continue;
      const t = D.dt[k] / 1e3;
      const leaf = D.node[k] > 0 ? D.frames[T.frame[D.node[k]]] : '?';
      const r = el('rect', { class: 'sample', 'data-t': t.toFixed(3), x: x(t), y: 52, width: 2, height: 24, fill: warm(leaf) }, svg);
      const fr = pathOf(D.node[k]).split(';');
      el('title', {}, r).textContent = `+${t.toFixed(3)} ms, ${D.w[k]} ${unit()}: ${fr.slice(-6).reverse().join(' \u2190 ')}`;
    }
    for (let k = O.at[s]; k < O.at[s + 1]; k++) {
      if (O.dt[k] === null) continue;
      const t = O.dt[k] / 1e3, len = O.w[k] / 1e6;
      const r = el('rect', { class: 'offcpu', 'data-t': t.toFixed(3), 'data-ms': len.toFixed(3), x: x(t), y: 92,
                             width: Math.max(x(t + len) - x(t), 1), height: 24, fill: '#adb5bd' }, svg);
      const fr = pathOf(O.node[k]).split(';');
      el('title', {}, r).textContent = `+${t.toFixed(3)} ms, off CPU ${len.toFixed(3)} ms: ${fr.slice(-8).reverse().join(' \u2190 ')}`;
    }
    for (const k of marks) {
      if (D.marks.dt[k] === null) continue;
      const t = D.marks.dt[k] / 1e3;
      const g = el('g', { class: 'marker', 'data-t': t.toFixed(3) }, svg);
      el('line', { x1: x(t), x2: x(t), y1: 132, y2: 158, stroke: '#862e9c', 'stroke-width': 2 }, g);
      el('title', {}, g).textContent = `+${t.toFixed(3)} ms ${D.marks.kind[k]}: ${D.marks.text[k] || ''}`;
    }
    for (let v = 0; v <= 4; v++) {
      const ms = beg + (span * v) / 4;
      el('text', { x: x(ms), y: H - 8, class: 'tl', 'text-anchor': 'middle' }, svg).textContent = `${ms.toFixed(1)} ms`;
    }
    const n = D.at[s + 1] - D.at[s], no = O.at[s + 1] - O.at[s];
    $('ex-request-title').textContent =
      `Request ${D.span.id[s]} (${D.eps[D.span.ep[s]]}), ${fmt(D.span.dur[s])} ms from ${iso(D.base_ms + D.span.start[s] / 1e6)}: ` +
      `${n} sample${n === 1 ? '' : 's'} on its thread, ${no} off-CPU interval${no === 1 ? '' : 's'} ` +
      `(${msText(spanWeight(O, s))}), ${marks.length} marker${marks.length === 1 ? '' : 's'}`;
  }

  /* The brushed range on every timeline. */
  function drawBrushes() {
    for (const svg of document.querySelectorAll('svg.timeline')) {
      let r = svg.querySelector('rect.brush');
      if (st.from === null || st.to === null) { if (r) r.remove(); continue; }
      if (!r) r = el('rect', { class: 'brush', y: 0, fill: 'rgba(66,99,235,0.15)', stroke: '#4263eb' }, svg);
      const x0 = +svg.dataset.x0, x1 = +svg.dataset.x1, t0 = +svg.dataset.t0, t1 = +svg.dataset.t1;
      const x = (t) => Math.min(x1, Math.max(x0, x0 + ((t - t0) / (t1 - t0)) * (x1 - x0)));
      r.setAttribute('x', x(st.from));
      r.setAttribute('width', Math.max(x(st.to) - x(st.from), 1));
      r.setAttribute('height', svg.viewBox.baseVal.height);
    }
    for (const h of document.querySelectorAll('h3.ep')) h.classList.toggle('on', h.dataset.ep === st.ep);
  }

  /* ---- state <-> URL fragment ---- */

  function writeHash() {
    const p = [];
    if (st.from !== null) p.push('from=' + encodeURIComponent(iso(st.from)));
    if (st.to !== null) p.push('to=' + encodeURIComponent(iso(st.to)));
    if (st.ep !== null) p.push('ep=' + encodeURIComponent(st.ep));
    if (st.what !== 'cpu') p.push('what=' + st.what);
    if (st.view !== 'flame') p.push('view=' + st.view);
    if (st.fn !== null) p.push('fn=' + encodeURIComponent(st.fn));
    if (st.span !== null) p.push('span=' + encodeURIComponent(st.span));
    const h = p.length ? '#' + p.join('&') : '';
    if (location.hash !== h) history.replaceState(null, '', h || location.pathname + location.search);
  }

  function readHash() {
    const h = location.hash.slice(1);
    if (!h.includes('=')) return false;
    const q = {};
    for (const kv of h.split('&')) {
      const i = kv.indexOf('=');
      if (i <= 0) continue;
      try {
        q[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
      } catch (e) { /* a damaged link: that part is left out */ }
    }
    const t = (v) => (v === undefined || isNaN(Date.parse(v)) ? null : Date.parse(v));
    st.from = t(q.from);
    st.to = t(q.to);
    /* an endpoint this page does not have (a link from another report) filters nothing:
       dropped, so the summary never names a filter that is not applied */
    st.ep = q.ep !== undefined && D.eps.includes(q.ep) ? q.ep : null;
    st.view = ['flame', 'diff', 'sandwich'].includes(q.view) ? q.view : 'flame';
    st.what = q.what === 'offcpu' && D.off.node.length ? 'offcpu' : 'cpu';
    st.fn = q.fn === undefined ? null : q.fn;
    st.span = q.span === undefined ? null : q.span;
    st.zoom = 0;
    return true;
  }

  /* ---- the page ---- */

  function update() {
    const sel = selected();
    const selSelf = selfOf(sel);
    const cum = drawFlame(sel, selSelf);
    drawSandwich(selSelf);
    drawSlowest(sel);
    drawRequest();
    drawBrushes();
    for (const v of ['flame', 'diff', 'sandwich'])
      $('ex-view-' + v).classList.toggle('on', st.view === v);
    for (const w of ['cpu', 'offcpu']) $('ex-what-' + w).classList.toggle('on', st.what === w);
    const range = st.from === null && st.to === null ? 'the whole capture'
      : `${st.from === null ? 'start' : iso(st.from)} \u2013 ${st.to === null ? 'end' : iso(st.to)}`;
    const text = `Selection: ${range}, ${st.ep === null ? 'every endpoint' : st.ep}: ${sel.length} of ${D.span.id.length} requests, ` +
      `${weightText(cum[0])} ${st.what === 'offcpu' ? 'off' : 'of'} CPU attributed to them (${Math.round(cum[0])} ${unit()})` +
      (st.fn !== null ? `; function: ${st.fn}` : '') +
      (D.kept.spans < D.kept.of
        ? `. This page carries a uniform sample of the requests, ${D.kept.spans} of ${D.kept.of} ` +
          `(--page-samples): figures here are of those; spanfold stacks on the database has them all`
        : '');
    $('ex-status').textContent = text;
    $('ex-float').textContent = text + ' \u2193 (click: the explorer)';
    $('ex-float').hidden = inView || (st.from === null && st.ep === null);
    writeHash();
  }

  function brushing(svg) {
    let x0 = null, rect = null;
    const pt = (ev) => {
      const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
      return Math.min(+svg.dataset.x1, Math.max(+svg.dataset.x0, p.x));
    };
    const time = (x) => +svg.dataset.t0 + ((x - +svg.dataset.x0) / (+svg.dataset.x1 - +svg.dataset.x0)) * (+svg.dataset.t1 - +svg.dataset.t0);
    svg.style.cursor = 'crosshair';
    svg.addEventListener('mousedown', (ev) => {
      ev.preventDefault();
      x0 = pt(ev);
      rect = svg.querySelector('rect.brush') || el('rect', { class: 'brush', y: 0, fill: 'rgba(66,99,235,0.15)', stroke: '#4263eb' }, svg);
      rect.setAttribute('x', x0);
      rect.setAttribute('width', 1);
      rect.setAttribute('height', svg.viewBox.baseVal.height);
    });
    svg.addEventListener('mousemove', (ev) => {
      if (x0 === null) return;
      const x = pt(ev);
      rect.setAttribute('x', Math.min(x, x0));
      rect.setAttribute('width', Math.max(Math.abs(x - x0), 1));
    });
    const up = (ev) => {
      if (x0 === null) return;
      const x = pt(ev), a = Math.min(x, x0), b = Math.max(x, x0);
      x0 = null;
      if (b - a < 2) { drawBrushes(); return; }
      st.from = Math.round(time(a));
      st.to = Math.round(time(b));
      st.zoom = 0;
      update();
    };
    svg.addEventListener('mouseup', up);
    svg.addEventListener('mouseleave', up);
  }

  function clear() {
    Object.assign(st, { from: null, to: null, ep: null, what: 'cpu', view: 'flame', fn: null, span: null, zoom: 0 });
    update();
  }

  async function main() {
    try {
      await load();
    } catch (e) {
      $('ex-status').textContent = 'The explorer could not read its data: ' + e;
      $('ex-ui').hidden = false;
      return;
    }
    $('ex-ui').hidden = false;
    for (const svg of document.querySelectorAll('svg.timeline')) brushing(svg);
    for (const h of document.querySelectorAll('h3.ep')) {
      h.tabIndex = 0;
      const toggle = () => { st.ep = st.ep === h.dataset.ep ? null : h.dataset.ep; st.zoom = 0; update(); };
      h.addEventListener('click', toggle);
      h.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') toggle(); });
    }
    for (const v of ['flame', 'diff', 'sandwich'])
      $('ex-view-' + v).addEventListener('click', () => { st.view = v; update(); });
    $('ex-clear').addEventListener('click', clear);
    for (const w of ['cpu', 'offcpu']) {
      $('ex-what-' + w).hidden = D.off.node.length === 0; /* nothing to choose between */
      $('ex-what-' + w).addEventListener('click', () => { st.what = w; st.zoom = 0; update(); });
    }
    $('ex-float').addEventListener('click', () => $('explore').scrollIntoView());
    document.addEventListener('keydown', (ev) => {
      if (ev.target instanceof HTMLInputElement) return;
      if (ev.key === 'Escape') clear();
      else if ((ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') && st.from !== null && st.to !== null) {
        const w = (st.to - st.from) * (ev.key === 'ArrowLeft' ? -1 : 1);
        st.from += w;
        st.to += w;
        ev.preventDefault();
        update();
      }
    });
    window.addEventListener('hashchange', () => { if (readHash()) update(); });
    new IntersectionObserver((e) => {
      inView = e[0].isIntersecting;
      $('ex-float').hidden = inView || (st.from === null && st.ep === null);
    }).observe($('ex-ui'));
    readHash();
    update();
    window.sfExplore = {
      folded: () => foldedOf(selfOf(selected())),
      foldedRest: () => { const s = selfOf(selected()); return foldedOf(all[st.what].map((v, i) => v - s[i])); },
      selection: () => {
        const sel = selected();
        return { from: st.from === null ? null : iso(st.from), to: st.to === null ? null : iso(st.to), ep: st.ep,
                 what: st.what, view: st.view, fn: st.fn, span: st.span, spans: sel.length,
                 weight: cumOf(selfOf(sel))[0] };
      },
      sandwich: (fn) => { const r = sandwichOf(selfOf(selected()), fn); return { total: r.total, self: r.self }; },
      select: (o) => { Object.assign(st, o, { zoom: 0 }); update(); },
    };
    document.documentElement.dataset.explore = 'ready';
  }

  main();
})();
