// explore.test.mjs - the explorer of spanfold report's report.html (section#explore) in a
// real browser (TAP output).
//
// Drives the system Chromium with playwright-core, as report.test.mjs does.  Usage:
// node explore.test.mjs CONFIG.json, CONFIG made by tests/spanfold/t_report_explore.sh:
//   { "html": "DIR/report.html", "db": "spans.db", "spanfold": "bin/spanfold",
//     "expect": "expect.py", "fn": "slow function", "artifacts": "dir" }
// Every expected value comes from `spanfold stacks` on the database or from expect.py
// (python3 on the same database), run once the brush has chosen the range; none is read
// from the page.
import { ok, done, launch, watch } from './tap.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const url = pathToFileURL(cfg.html).href;
fs.mkdirSync(cfg.artifacts, { recursive: true });
const shot = (name) => path.join(cfg.artifacts, `explore-${name}.png`);

// ---- the independent side: spanfold stacks and expect.py ----

// `spanfold stacks --db DB ARGS...`: its folded lines without the '# weight: ns' line
// ('' when it says there is nothing to show: no span or no sample selected).
function stacks(...args) {
  let out;
  try {
    out = execFileSync(cfg.spanfold, ['stacks', '--db', cfg.db, ...args],
                       { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (e.status === 2 && /no span|no sample/.test(String(e.stderr))) return '';
    throw new Error(`spanfold stacks ${args.join(' ')}: ${String(e.stderr || e.message).trim()}`);
  }
  const nl = out.indexOf('\n');
  if (out.slice(0, nl) !== '# weight: ns') throw new Error('spanfold stacks: first line ' + out.slice(0, nl));
  return out.slice(nl + 1);
}
const expect = (q) =>
  JSON.parse(execFileSync('python3', [cfg.expect, cfg.db, JSON.stringify(q)], { encoding: 'utf8' }));
const lines = (text) => text.split('\n').filter((l) => l !== '');
const bytewise = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const weightOf = (l) => Number(l.slice(l.lastIndexOf(' ') + 1));
const sum = (text) => lines(text).reduce((s, l) => s + weightOf(l), 0);
// where two folded texts first differ, for the diagnostic
function firstDiff(a, b) {
  const x = lines(a), y = lines(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return { line: i + 1, page: x[i], expected: y[i], page_lines: x.length, expected_lines: y.length };
  return a === b ? null : { note: 'same lines, different text (newlines)', page: a.slice(-40), expected: b.slice(-40) };
}

// ---- the page ----

const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1240, height: 1000 } });
const errors = [];
let page = null;

// A new page at report.html + hash (a real load, not a hash change), watched for errors
// and fetches; waits for window.sfExplore.
async function open(hash = '') {
  if (page) await page.close();
  page = await context.newPage();
  watch(page, errors);
  page.on('dialog', (d) => d.dismiss());
  await page.goto(url + hash);
  await page.waitForLoadState('load');
  await page.waitForFunction(() => window.sfExplore !== undefined, null, { timeout: 5000 });
}

// location.hash as {key: decoded value}
async function fragment() {
  const h = await page.evaluate(() => location.hash);
  const out = {};
  for (const kv of h.replace(/^#/, '').split('&')) {
    if (!kv) continue;
    const i = kv.indexOf('=');
    out[decodeURIComponent(i < 0 ? kv : kv.slice(0, i))] = i < 0 ? '' : decodeURIComponent(kv.slice(i + 1));
  }
  return { raw: h, ...out };
}
const untilHash = (re) =>
  page.waitForFunction((src) => new RegExp(src).test(location.hash), re.source, { timeout: 5000 });
// waits (at most 5 s, then goes on) for location.hash to differ from PREV
const hashChange = (prev) =>
  page.waitForFunction((p) => location.hash !== p, prev, { timeout: 5000 }).catch(() => {});
const ex = (fn, ...a) => page.evaluate(([f, args]) => window.sfExplore[f](...args), [fn, a]);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
// the weight in a frame title "NAME (W ns, P %)"; W may have thousands separators
function titleWeight(t) {
  const m = /\(([\d,.\u00a0\u202f ]+) ns[,;]/.exec(t);
  return m ? Number(m[1].replace(/[^\d]/g, '')) : NaN;
}

try {
  // ---- 1: the page loads with the explorer, quietly ----
  await open();
  ok((await page.locator('section#explore').count()) === 1 && errors.length === 0,
     'page loads with section#explore; no console error, no script error, nothing fetched', errors);

  // ---- 2: a real mouse brush on the first timeline ----
  const tl = page.locator('svg.timeline').first();
  await tl.scrollIntoViewIfNeeded();
  const geo = await tl.evaluate((s) => {
    const r = s.getBoundingClientRect(), vb = s.viewBox.baseVal;
    const ticks = Array.from(s.querySelectorAll('text.tl'))
      .filter((t) => /^\d\d:\d\d:\d\d$/.test(t.textContent))
      .map((t) => ({ x: +t.getAttribute('x'), hms: t.textContent }));
    return { left: r.left, top: r.top, w: r.width, h: r.height, vbx: vb.x, vbw: vb.width,
             x0: parseFloat(s.getAttribute('data-x0')), x1: parseFloat(s.getAttribute('data-x1')),
             ep: s.getAttribute('data-ep'), ticks };
  });
  if (!(geo.x1 > geo.x0) || !geo.ep) throw new Error('first svg.timeline lacks data-x0/data-x1/data-ep: ' + JSON.stringify(geo));
  const sx = (v) => geo.left + (v - geo.vbx) * geo.w / geo.vbw;
  const ax = geo.x0 + 0.3 * (geo.x1 - geo.x0), bx = geo.x0 + 0.6 * (geo.x1 - geo.x0);
  const y = geo.top + geo.h / 2;
  await page.mouse.move(sx(ax), y);
  await page.mouse.down();
  await page.mouse.move((sx(ax) + sx(bx)) / 2, y, { steps: 6 });
  await page.mouse.move(sx(bx), y, { steps: 6 });
  await page.mouse.up();
  await untilHash(/(^#|&)from=.*&to=|(^#|&)to=.*&from=/);
  const brushed = await fragment();
  const { from, to } = brushed;
  const range = `${from}..${to}`;
  // where the brush's ends fall on the chart's own wall-clock axis (its hh:mm:ss ticks)
  const tickMs = (t) => Date.parse(from.slice(0, 11) + t.hms + 'Z');
  const [ta, tb] = [geo.ticks[0], geo.ticks[geo.ticks.length - 1]];
  const atX = (v) => tickMs(ta) + (v - ta.x) * (tickMs(tb) - tickMs(ta)) / (tb.x - ta.x);
  const msPerUnit = (tickMs(tb) - tickMs(ta)) / (tb.x - ta.x);
  const slack = 4 * msPerUnit * geo.vbw / geo.w + 1; // 4 screen pixels
  const offA = Date.parse(from) - atX(ax), offB = Date.parse(to) - atX(bx);
  ok(ISO.test(from) && ISO.test(to) && Math.abs(offA) <= slack && Math.abs(offB) <= slack && !('ep' in brushed),
     `brush 30 %..60 % of ${geo.ep}'s plot: ${range} in the fragment, at the axis' times (±${slack.toFixed(0)} ms), no endpoint`,
     { fragment: brushed.raw, ticks: [ta, tb], off_ms: [offA, offB] });
  await page.waitForTimeout(100);
  await page.screenshot({ path: shot('brushed') });

  const cliFolded = stacks('--during', range);
  const exp = expect({ from, to, fn: cfg.fn });
  const folded = await ex('folded');
  ok(cliFolded !== '' && folded === cliFolded,
     `sfExplore.folded() equals spanfold stacks --during ${range} (${lines(cliFolded).length} stacks)`,
     firstDiff(folded, cliFolded));
  const fr = await page.locator('svg#ex-flame g.fr').evaluateAll((gs) => gs.map((g) => ({
    title: (g.querySelector('title') || {}).textContent || '',
    w: g.querySelector('rect') ? g.querySelector('rect').getBoundingClientRect().width : 0 })));
  const widest = fr.reduce((a, b) => (b.w > a.w ? b : a), { w: -1, title: '' });
  ok(fr.length > 0 && titleWeight(widest.title) === sum(cliFolded),
     `#ex-flame's widest frame weighs the selection's ${sum(cliFolded)} ns`, { frames: fr.length, widest });
  const sel = await ex('selection');
  const status = (await page.locator('#ex-status').textContent()) || '';
  ok(exp.range.count > 0 && sel.spans === exp.range.count && sel.weight === exp.range.weight &&
     !sel.ep && new RegExp(`(^|\\D)${exp.range.count}(\\D|$)`).test(status),
     `selection: ${exp.range.count} requests started in [from, to) (database, ${exp.span_clocks} clock), ` +
     `${exp.range.weight} ns, all endpoints; #ex-status says the count`,
     { selection: sel, expected: { spans: exp.range.count, weight: exp.range.weight }, status });

  // ---- 3: the differential against the rest ----
  // `--vs rest --folded` prints "frames REST SEL", REST scaled to the selection's total as
  // difffolded.pl -n does: int(rest * total_sel / total_rest).  foldedRest() is unscaled:
  // it must equal the database's fold of the other spans' samples, and that fold scaled
  // the same way must give the CLI's column (each within 1 of the long-double rounding).
  const diff = lines(stacks('--during', range, '--vs', 'rest', '--folded'));
  const three = diff.map((l) => l.split(' ')).map((p) => ({ frames: p.slice(0, -2).join(' '), rest: BigInt(p[p.length - 2]), sel: BigInt(p[p.length - 1]) }));
  const dbRest = Object.entries(exp.rest);
  const restText = dbRest.map(([f, w]) => `${f} ${w}`).sort(bytewise).map((l) => l + '\n').join('');
  const selText = three.filter((r) => r.sel > 0n).map((r) => `${r.frames} ${r.sel}`).sort(bytewise).map((l) => l + '\n').join('');
  const tSel = BigInt(exp.range.weight), tRest = dbRest.reduce((s, [, w]) => s + BigInt(w), 0n);
  const cliRest = new Map(three.filter((r) => r.rest > 0n).map((r) => [r.frames, r.rest]));
  const scaledOff = dbRest.filter(([f, w]) => {
    const want = cliRest.get(f), got = BigInt(w) * tSel / tRest;
    return want === undefined || got - want > 1n || want - got > 1n;
  }).map(([f, w]) => ({ frames: f, db: w, scaled: String(BigInt(w) * tSel / tRest), cli: String(cliRest.get(f)) }));
  const rest = await ex('foldedRest');
  ok(restText !== '' && rest === restText && scaledOff.length === 0 && cliRest.size === dbRest.length && selText === cliFolded,
     `sfExplore.foldedRest() equals the other spans' fold (${dbRest.length} stacks, ${tRest} ns), ` +
     'which scaled to the selection is the rest column of --vs rest',
     { page_vs_db: firstDiff(rest, restText), db_scaled_vs_cli: scaledOff.slice(0, 3),
       stacks: [cliRest.size, dbRest.length], selection_column_ok: selText === cliFolded });
  await page.locator('button#ex-view-diff').click();
  await untilHash(/(^#|&)view=diff(&|$)/);
  ok((await fragment()).view === 'diff' && (await ex('selection')).view === 'diff',
     'button#ex-view-diff: view=diff in the fragment and the selection');
  await page.screenshot({ path: shot('diff') });
  await page.locator('button#ex-view-flame').click();

  // ---- 5: the slowest request of the selection, on its own timeline ----
  const rows = page.locator('table#ex-slowest tr[data-span]');
  const rowIds = await rows.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-span')));
  const span = rowIds[0];
  ok(rowIds.length > 0 && rowIds.every((s) => exp.range.ids.includes(s)) && exp.range.slowest.includes(span),
     `table#ex-slowest: ${rowIds.length} requests of the selection, first the slowest (${span})`,
     { rows: rowIds.slice(0, 5), slowest: exp.range.slowest });
  await rows.first().scrollIntoViewIfNeeded();
  await rows.first().click();
  await untilHash(/(^#|&)span=/);
  const sp = expect({ span }).span;
  const req = await page.locator('#ex-request svg#ex-request-svg').evaluate((s) => ({
    phases: Array.from(s.querySelectorAll('rect.phase')).map((r) => r.getAttribute('data-phase')),
    hs: Array.from(s.querySelectorAll('rect.phase[data-phase="handshake"] title')).map((t) => t.textContent),
    t: Array.from(s.querySelectorAll('.sample')).map((e) => parseFloat(e.getAttribute('data-t'))),
    markers: s.querySelectorAll('.marker').length }));
  const visible = await page.locator('#ex-request').isVisible();
  // the handshake phase exactly where the request opened its connection (database), of its length
  const hsMs = req.hs.length ? parseFloat(req.hs[0].replace(/^handshake: /, '')) : null;
  const phasesOk = req.phases.length >= 1 && req.phases.length <= 4 &&
    req.phases.every((p) => ['handshake', 'request', 'server', 'response'].includes(p)) &&
    (sp.handshake_ms === null ? hsMs === null : hsMs !== null && Math.abs(hsMs - sp.handshake_ms) < 0.002);
  const ascending = req.t.every((t, i) => Number.isFinite(t) && (i === 0 || t >= req.t[i - 1]));
  const near = req.t.length === sp.t_ms.length && req.t.every((t, i) => Math.abs(t - sp.t_ms[i]) <= 1);
  ok(visible && (await fragment()).span === span && phasesOk && sp.samples > 0 &&
     req.t.length === sp.samples && ascending && near && req.markers === sp.markers,
     `request ${span}: #ex-request shows ${req.phases.length} phases (handshake ${sp.handshake_ms} ms), ${sp.samples} samples in time order ` +
     `at their ms from the request start, ${sp.markers} markers (database)`,
     { visible, page: req, expected: sp });
  await page.locator('#ex-request').screenshot({ path: shot('request') });

  // ---- arrow keys move the range by its own width ----
  const width = Date.parse(to) - Date.parse(from);
  const iso = (ms) => new Date(ms).toISOString();
  const before = (await fragment()).raw;
  await page.keyboard.press('ArrowRight');
  await hashChange(before);
  const right = await fragment();
  await page.keyboard.press('ArrowLeft');
  await hashChange(right.raw);
  const left = await fragment();
  ok(right.from === to && right.to === iso(Date.parse(to) + width) && left.from === from && left.to === to,
     `ArrowRight moves the range by its width (${width} ms), ArrowLeft back`, { right: right.raw, left: left.raw });

  // ---- 7: Escape clears ----
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => location.hash === '' || location.hash === '#', null, { timeout: 5000 }).catch(() => {});
  const cleared = await fragment();
  const all = await ex('selection');
  ok(Object.keys(cleared).length === 1 && all.spans === exp.spans_total,
     `Escape: fragment empty, selection back to all ${exp.spans_total} requests`, { fragment: cleared.raw, selection: all });

  // ---- 6: the fragment saved after the brush restores it on a new load ----
  await open(brushed.raw);
  const again = await ex('folded');
  ok(again === folded, `a new load of #${brushed.raw.slice(1)} restores the selection`, firstDiff(again, folded));

  // ---- the endpoint filter: clicking a timeline's heading ----
  const h3 = page.locator('section#timeline h3[data-ep]').first();
  const ep = await h3.getAttribute('data-ep');
  await h3.click();
  await untilHash(/(^#|&)ep=/);
  const epFolded = await ex('folded');
  const epCli = stacks('--during', range, '--where', `endpoint = "${ep}"`);
  const f1 = await fragment();
  ok(f1.ep === ep && (await ex('selection')).ep === ep && epFolded === epCli,
     `h3[data-ep="${ep}"] filters: ep in the fragment, folded() equals --where 'endpoint = "${ep}"'`,
     { fragment: f1.raw, diff: firstDiff(epFolded, epCli) });
  await h3.click();
  await page.waitForFunction(() => !/(^#|&)ep=/.test(location.hash), null, { timeout: 5000 }).catch(() => {});
  const f2 = await fragment();
  ok(!('ep' in f2) && f2.from === from && f2.to === to && (await ex('folded')) === folded,
     'a second click on the heading drops the filter', { fragment: f2.raw });

  // ---- 4: sandwich view of the slow function: clicked in the flame graph ----
  const frameList = () => page.locator('svg#ex-flame g.fr').evaluateAll((gs) => gs.map((g, i) => ({
    i, title: (g.querySelector('title') || {}).textContent || '',
    w: g.querySelector('rect') ? g.querySelector('rect').getBoundingClientRect().width : 0 })));
  const mine = (f) => f.title.startsWith(cfg.fn + ' (');
  const target = (await frameList()).filter(mine).sort((a, b) => b.w - a.w)[0];
  if (!target) throw new Error(`no frame ${cfg.fn} in #ex-flame of the selection`);
  await page.locator('svg#ex-flame g.fr').nth(target.i).click();
  const zoomed = await frameList();
  const full = Math.max(...zoomed.map((f) => f.w));
  const zoomOk = zoomed.some((f) => mine(f) && Math.abs(f.w - full) < 0.5) && full > 2 * target.w;
  await page.locator('button#ex-view-sandwich').click();
  await untilHash(/(^#|&)view=sandwich(&|$)/);
  const f4 = await fragment();
  const clickedTotal = (await page.locator('#ex-sandwich-total').textContent()) || '';
  const nums = (t) => Array.from(t.matchAll(/(\d[\d,\u00a0\u202f]*) ns/g)).map((m) => Number(m[1].replace(/[^\d]/g, '')));
  ok(zoomOk && f4.fn === cfg.fn && f4.view === 'sandwich' && nums(clickedTotal).includes(exp.fn.total),
     `a click on ${cfg.fn} in #ex-flame zooms to it; button#ex-view-sandwich shows its ${exp.fn.total} ns`,
     { clicked: target, zoomed_widest: zoomed.filter(mine).map((f) => f.w), full, fragment: f4.raw, text: clickedTotal });

  // ---- 4: the same from the fragment, on a new load ----
  const sandHash = `#from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&view=sandwich&fn=${encodeURIComponent(cfg.fn)}`;
  await open(sandHash);
  const sw = await ex('sandwich', cfg.fn);
  const totalText = (await page.locator('#ex-sandwich-total').textContent()) || '';
  const shown = nums(totalText);
  const f3 = await fragment();
  const panes = (await page.locator('svg#ex-callers').isVisible()) && (await page.locator('svg#ex-callees').isVisible());
  ok(exp.fn.total > 0 && sw.total === exp.fn.total && sw.self === exp.fn.self && shown.includes(exp.fn.total) &&
     f3.view === 'sandwich' && f3.fn === cfg.fn && panes,
     `sandwich ${cfg.fn}: total ${exp.fn.total} ns, self ${exp.fn.self} ns (database), shown in #ex-sandwich-total, callers and callees drawn`,
     { sandwich: sw, text: totalText, fragment: f3.raw, panes, expected: exp.fn });
  await page.locator('section#explore').screenshot({ path: shot('sandwich') });

  ok(errors.length === 0, 'no console errors, no script errors, nothing fetched in any step', errors);

  // ---- 8: without JavaScript the static report is all there ----
  const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1240, height: 1000 } });
  const p2 = await nojs.newPage();
  await p2.goto(url);
  await p2.waitForLoadState('load');
  // the <noscript> text as rendered: shown, not merely in the markup
  const ns = (await p2.locator('section#explore noscript').filter({ visible: true }).allInnerTexts()).join(' ').trim();
  const st = { verdict: await p2.locator('.verdict').count(), timelines: await p2.locator('svg.timeline').count(),
               iframes: await p2.locator('iframe.fg').count(), noscript: ns };
  ok(st.verdict >= 1 && (await p2.locator('.verdict').first().isVisible()) && st.timelines >= 1 &&
     st.iframes === 3 && ns.length > 0,
     'JavaScript off: verdict, timelines, three flame graphs, a <noscript> text in section#explore', st);
  await p2.screenshot({ path: shot('nojs') });
  await nojs.close();

  // ---- 9: the screenshots ----
  const shots = ['brushed', 'diff', 'request', 'sandwich', 'nojs'].map(shot);
  ok(shots.every((f) => fs.existsSync(f) && fs.statSync(f).size > 1000),
     `screenshots: ${shots.map((f) => path.basename(f)).join(', ')}`, shots);
} catch (e) {
  ok(false, 'browser step threw: ' + String(e.message || e).split('\n')[0]);
}
await browser.close();
done();
