"use strict";
var svgroot, frameset, details, unzoombtn, searchbtn, icbtn, matchedtxt;
var ignorecase = false, currentterm = null, rootw = 0;
function init(evt) {
  svgroot = document.documentElement;
  frameset = document.getElementById('frames');
  details = document.getElementById('details').firstChild;
  unzoombtn = document.getElementById('unzoom');
  searchbtn = document.getElementById('search');
  icbtn = document.getElementById('ignorecase');
  matchedtxt = document.getElementById('matched');
  eachframe(function (g, r) {
    r.setAttribute('data-x', r.getAttribute('x'));
    r.setAttribute('data-w', r.getAttribute('width'));
    r.setAttribute('data-fill', r.getAttribute('fill'));
    var w = parseFloat(r.getAttribute('width'));
    if (w > rootw) rootw = w;
  });
  frameset.addEventListener('mouseover', function (e) {
    var g = frameof(e.target);
    if (g) details.nodeValue = FG.nametype + ' ' + titleof(g);
  });
  frameset.addEventListener('mouseout', function () { details.nodeValue = ' '; });
  frameset.addEventListener('click', function (e) {
    var g = frameof(e.target);
    if (!g) return;
    if (g.nodeName === 'a') { if (!e.ctrlKey) return; e.preventDefault(); }
    zoom(g);
  });
  unzoombtn.addEventListener('click', function () { unzoom(); });
  searchbtn.addEventListener('click', function () {
    if (currentterm === null) asksearch(); else resetsearch();
  });
  icbtn.addEventListener('click', toggleic);
  window.addEventListener('keydown', function (e) {
    var k = (e.key || '').toLowerCase();
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && k === 'f')) {
      e.preventDefault(); asksearch();
    } else if ((e.ctrlKey || e.metaKey) && k === 'i') {
      e.preventDefault(); toggleic();
    }
  });
  var p = getparams();
  if (p.x !== undefined && p.y !== undefined) {
    var hit = null;
    eachframe(function (g, r) {
      if (!hit && r.getAttribute('data-x') === p.x && r.getAttribute('y') === p.y) hit = g;
    });
    if (hit) zoom(hit);
  }
  if (p.s !== undefined) { ignorecase = p.i === '1'; showic(); search(p.s); }
}
function eachframe(fn) {
  var list = frameset.children;
  for (var i = 0; i < list.length; i++) {
    var r = list[i].querySelector('rect');
    if (r) fn(list[i], r);
  }
}
function frameof(el) {
  while (el && el.parentNode !== frameset) el = el.parentNode;
  return el || null;
}
function titleof(g) {
  var t = g.querySelector('title');
  return t ? t.textContent : '';
}
function nameof(g) {
  return titleof(g).replace(/ \([^()]*\)$/, '');
}
function getparams() {
  var out = {}, q = window.location.search.replace(/^\?/, '');
  if (!q) return out;
  q.split('&').forEach(function (kv) {
    var i = kv.indexOf('='), k = i < 0 ? kv : kv.slice(0, i);
    var v = i < 0 ? '' : kv.slice(i + 1);
    try { out[decodeURIComponent(k)] = decodeURIComponent(v.replace(/\+/g, ' ')); }
    catch (err) { }
  });
  return out;
}
function setparams(p) {
  var parts = [];
  for (var k in p) if (p[k] !== undefined) parts.push(encodeURIComponent(k) + '=' +
      encodeURIComponent(p[k]));
  var url = window.location.pathname + (parts.length ? '?' + parts.join('&') : '');
  try { history.replaceState(null, '', url); } catch (err) { }
}
function fittext(g, r) {
  var t = g.querySelector('text');
  if (!t) return;
  var w = parseFloat(r.getAttribute('width')), name = nameof(g);
  t.setAttribute('x', (parseFloat(r.getAttribute('x')) + 3).toFixed(2));
  var chars = Math.floor(w / (FG.fontsize * FG.fontwidth));
  if (chars < 3) { t.textContent = ''; return; }
  t.textContent = chars < name.length ? name.substring(0, chars - 2) + '..' : name;
}
function isabove(y, y0) { return FG.inverted ? y > y0 : y < y0; }
function zoom(target) {
  var tr = target.querySelector('rect');
  var x0 = parseFloat(tr.getAttribute('data-x')), w0 = parseFloat(tr.getAttribute('data-w'));
  var y0 = parseFloat(tr.getAttribute('y')), eps = 1e-6;
  if (w0 >= rootw - eps) { unzoom(); return; }
  var full = parseFloat(svgroot.getAttribute('width')) - 2 * FG.xpad;
  var scale = full / w0;
  eachframe(function (g, r) {
    var x = parseFloat(r.getAttribute('data-x')), w = parseFloat(r.getAttribute('data-w'));
    var y = parseFloat(r.getAttribute('y'));
    g.classList.remove('hide'); g.classList.remove('parent');
    if (!isabove(y, y0) && y !== y0 && x <= x0 + eps && x + w >= x0 + w0 - eps) {
      g.classList.add('parent');
      r.setAttribute('x', FG.xpad.toFixed(1)); r.setAttribute('width', full.toFixed(1));
    } else if ((isabove(y, y0) || y === y0) && x >= x0 - eps && x + w <= x0 + w0 + eps) {
      r.setAttribute('x', (FG.xpad + (x - x0) * scale).toFixed(1));
      r.setAttribute('width', (w * scale).toFixed(1));
    } else {
      g.classList.add('hide');
    }
    fittext(g, r);
  });
  unzoombtn.classList.remove('hide');
  var p = getparams();
  p.x = tr.getAttribute('data-x'); p.y = tr.getAttribute('y');
  setparams(p);
}
function unzoom() {
  eachframe(function (g, r) {
    g.classList.remove('hide'); g.classList.remove('parent');
    r.setAttribute('x', r.getAttribute('data-x'));
    r.setAttribute('width', r.getAttribute('data-w'));
    fittext(g, r);
  });
  unzoombtn.classList.add('hide');
  var p = getparams();
  delete p.x; delete p.y;
  setparams(p);
}
function showic() {
  if (ignorecase) icbtn.classList.add('show'); else icbtn.classList.remove('show');
}
function toggleic() {
  ignorecase = !ignorecase;
  showic();
  if (currentterm !== null) search(currentterm);
}
function asksearch() {
  var t = prompt('Enter a search term (regexp allowed, eg: ^ext4_)' +
      (ignorecase ? ', ignoring case' : '') + '\nPress Ctrl-i to toggle case sensitivity',
      currentterm === null ? '' : currentterm);
  if (t !== null && t !== '') search(t);
}
function resetsearch() {
  eachframe(function (g, r) { r.setAttribute('fill', r.getAttribute('data-fill')); });
  currentterm = null;
  matchedtxt.classList.add('hide');
  matchedtxt.firstChild.nodeValue = ' ';
  searchbtn.classList.remove('show');
  searchbtn.firstChild.nodeValue = 'Search';
  var p = getparams();
  delete p.s; delete p.i;
  setparams(p);
}
function search(term) {
  var re;
  try { re = new RegExp(term, ignorecase ? 'i' : ''); } catch (err) { return; }
  resetsearch();
  currentterm = term;
  var hits = [];
  eachframe(function (g, r) {
    if (!re.test(nameof(g))) return;
    r.setAttribute('fill', FG.searchcolor);
    hits.push([parseFloat(r.getAttribute('data-x')), parseFloat(r.getAttribute('data-w'))]);
  });
  hits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var covered = 0, end = -1;
  for (var i = 0; i < hits.length; i++) {
    if (hits[i][0] + 1e-6 < end) continue; /* inside a matched frame below it */
    covered += hits[i][1];
    end = hits[i][0] + hits[i][1];
  }
  var pct = rootw > 0 ? 100 * covered / rootw : 0;
  matchedtxt.firstChild.nodeValue = 'Matched: ' + (pct >= 100 - 1e-9 ? '100' :
      pct.toFixed(1)) + '%';
  matchedtxt.classList.remove('hide');
  searchbtn.classList.add('show');
  searchbtn.firstChild.nodeValue = 'Reset Search';
  var p = getparams();
  p.s = term;
  if (ignorecase) p.i = '1'; else delete p.i;
  setparams(p);
}
