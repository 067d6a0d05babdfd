// flamegraph.test.mjs - spanfold flame graph SVGs in a real browser (TAP output).
//
// Drives the system Chromium (Debian package `chromium`) with playwright-core; no browser
// is downloaded.  Usage: node flamegraph.test.mjs CONFIG.json, where CONFIG names the SVGs
// made by tests/flamegraph/t_browser.sh and the values computed from their folded input:
//   { "svg": "...", "inverted": "...", "diff": "...", "term": "regex",
//     "expect_pct": 12.3, "term_ci": "REGEX", "expect_pct_ci": 4.5, "artifacts": "dir" }
import { ok, done, launch } from './tap.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1220, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('requestfailed', (r) => errors.push('request ' + r.url()));
let answer = null; // text typed into the search prompt
page.on('dialog', (d) => (answer === null ? d.dismiss() : d.accept(answer)));

// Every frame as the page sees it now.
const frames = () => page.evaluate(() => Array.from(document.getElementById('frames').children)
  .map((g, i) => {
    const r = g.querySelector('rect'), t = g.querySelector('text');
    return { i, title: g.querySelector('title').textContent, x: +r.getAttribute('x'),
             w: +r.getAttribute('width'), y: +r.getAttribute('y'), fill: r.getAttribute('fill'),
             hidden: g.classList.contains('hide'), parent: g.classList.contains('parent'),
             text: t ? t.textContent : '' };
  }));
const textOf = (id) => page.evaluate((i) => document.getElementById(i).textContent, id);
const visible = (id) => page.evaluate((i) => getComputedStyle(document.getElementById(i)).display !== 'none', id);
const nameOf = (title) => title.replace(/ \([^()]*\)$/, '');
const search = (u) => new URL(u).searchParams;
async function clickFrame(i) {
  await page.locator('#frames > *').nth(i).click();
}
fs.mkdirSync(cfg.artifacts, { recursive: true });
try {

// ---- load ----
await page.goto(pathToFileURL(cfg.svg).href);
const root = await page.evaluate(() => document.documentElement.nodeName);
ok(root === 'svg' && (await page.locator('parsererror').count()) === 0, 'SVG parses and loads', root);
const f0 = await frames();
const full = Math.max(...f0.map((f) => f.w));
ok(f0.length > 10 && Math.abs(full - 1180) < 0.05, `${f0.length} frames drawn, root 1180 px wide`, full);
await page.screenshot({ path: path.join(cfg.artifacts, 'flamegraph-default.png') });

// ---- hover ----
// a frame two levels above the root, narrower than the graph: something to zoom into
const target = f0.filter((f) => f.w > 40 && f.w < 900 && f.y < Math.max(...f0.map((g) => g.y)) - 20)
  .sort((a, b) => b.w - a.w)[0];
await page.locator('#frames > *').nth(target.i).hover();
const det = await textOf('details');
ok(det === 'Function: ' + target.title, 'hover shows "Function: NAME (N samples, P%)"', det);
ok(/\(\d[\d,]* samples, \d+\.\d\d%\)$/.test(det), 'details carry samples and percent', det);
await page.mouse.move(2, 2);
ok((await textOf('details')).trim() === '', 'details cleared when the pointer leaves');

// ---- click to zoom ----
await clickFrame(target.i);
let f1 = await frames();
const z = f1[target.i];
ok(Math.abs(z.w - 1180) < 0.05 && Math.abs(z.x - 10) < 0.05, `click zooms: "${nameOf(target.title)}" ${target.w} px -> full width`, z);
const name = nameOf(target.title);
ok(z.text === name || (z.text.endsWith('..') && name.startsWith(z.text.slice(0, -2))), 'zoomed label refitted', z.text);
const anc = f1.filter((f) => f.parent);
ok(anc.length >= 1 && anc.every((f) => f.y > z.y && Math.abs(f.w - 1180) < 0.05), `${anc.length} ancestors shown full width and dimmed`);
const hid = f1.filter((f) => f.hidden).length;
ok(hid > 0, `${hid} frames outside the zoomed one hidden`);
const kids = f1.filter((f) => !f.hidden && !f.parent && f.y < z.y);
ok(kids.every((f) => f.x >= 9.9 && f.x + f.w <= 1190.2), 'children of the zoomed frame scaled inside it');
ok(await visible('unzoom'), 'Reset Zoom shown');
let url = search(page.url());
ok(url.get('x') === String(target.x.toFixed(1)) && url.get('y') === String(target.y), `zoom kept in URL (${page.url().split('?')[1]})`);
await page.screenshot({ path: path.join(cfg.artifacts, 'flamegraph-zoomed.png') });
const zoomUrl = page.url();

// ---- reset zoom ----
await page.locator('#unzoom').click();
f1 = await frames();
ok(f1.every((f, i) => Math.abs(f.w - f0[i].w) < 1e-9 && Math.abs(f.x - f0[i].x) < 1e-9 && !f.hidden && !f.parent), 'Reset Zoom restores every frame');
ok(!(await visible('unzoom')) && !search(page.url()).has('x'), 'Reset Zoom hidden and URL cleared');

// ---- search with Ctrl-F ----
answer = cfg.term;
await page.keyboard.press('Control+f');
f1 = await frames();
const re = new RegExp(cfg.term);
const hits = f1.filter((f) => f.fill === 'rgb(230,0,230)');
const want = f1.filter((f) => re.test(nameOf(f.title)));
ok(hits.length > 0 && hits.length === want.length && hits.every((f) => re.test(nameOf(f.title))), `Ctrl-F search /${cfg.term}/ highlights the ${want.length} matching frames`, hits.length);
let m = await textOf('matched');
let pct = parseFloat(m.replace(/^Matched: /, ''));
ok(Math.abs(pct - cfg.expect_pct) <= 0.1, `matched percentage ${m} (from the folded input: ${cfg.expect_pct.toFixed(2)}%)`, m);
ok(search(page.url()).get('s') === cfg.term, 'search kept in URL');
await page.screenshot({ path: path.join(cfg.artifacts, 'flamegraph-search.png') });

// ---- ignore case (Ctrl-I) ----
await page.keyboard.press('Control+i');
answer = cfg.term_ci;
await page.locator('#search').click(); // "Reset Search"
ok((await frames()).every((f, i) => f.fill === f0[i].fill), 'Reset Search restores the colours');
await page.locator('#search').click(); // asks again
m = await textOf('matched');
pct = parseFloat(m.replace(/^Matched: /, ''));
ok(Math.abs(pct - cfg.expect_pct_ci) <= 0.1, `Ctrl-I: case-insensitive /${cfg.term_ci}/i matches ${m} (want ${cfg.expect_pct_ci.toFixed(2)}%)`, m);
await page.keyboard.press('Control+i');

// ---- URL restores the view ----
const restore = new URL(zoomUrl);
restore.searchParams.set('s', cfg.term);
await page.goto(restore.href);
f1 = await frames();
ok(Math.abs(f1[target.i].w - 1180) < 0.05 && f1.some((f) => f.hidden), 'opening the URL restores the zoom');
ok(f1.filter((f) => f.fill === 'rgb(230,0,230)').length > 0 && (await textOf('matched')).startsWith('Matched:'), 'opening the URL restores the search');
await clickFrame(0); // the root: back to full view
ok((await frames()).every((f) => !f.hidden && !f.parent), 'clicking the root zooms out');

// ---- icicle graph ----
await page.goto(pathToFileURL(cfg.inverted).href);
const g0 = await frames();
const it = g0.filter((f) => f.w > 40 && f.w < 900 && f.y > Math.min(...g0.map((g) => g.y)) + 20).sort((a, b) => b.w - a.w)[0];
await clickFrame(it.i);
const g1 = await frames();
const ia = g1.filter((f) => f.parent);
ok(Math.abs(g1[it.i].w - 1180) < 0.05 && ia.length > 0 && ia.every((f) => f.y < g1[it.i].y), 'icicle graph: zoom keeps ancestors above');

// ---- differential graph ----
await page.goto(pathToFileURL(cfg.diff).href);
const d0 = await frames();
const red = d0.find((f) => /; \+\d/.test(f.title)), blue = d0.find((f) => /; -\d/.test(f.title));
ok(red && /^rgb\(255,\d+,\d+\)$/.test(red.fill) && blue && /^rgb\(\d+,\d+,255\)$/.test(blue.fill), 'differential: grown frames red, shrunk frames blue', [red, blue]);
await page.locator('#frames > *').nth(red.i).hover();
ok((await textOf('details')).includes('; +'), 'differential hover shows the delta percent');
await page.screenshot({ path: path.join(cfg.artifacts, 'flamegraph-diff.png') });

ok(errors.length === 0, 'no script errors and no network requests', errors);
} catch (e) {
  ok(false, 'browser step threw: ' + String(e.message || e).split('\n')[0]);
}
await browser.close();
done();
