// report.test.mjs - spanfold report's report.html in a real browser (TAP output).
//
// Drives the system Chromium with playwright-core, as flamegraph.test.mjs does.  Usage:
// node report.test.mjs CONFIG.json, CONFIG made by tests/spanfold/t_report_browser.sh:
//   { "html": "DIR/report.html", "term": "regex", "expect_pct": 12.3, "artifacts": "dir" }
// expect_pct is the share of the slowest requests' samples whose stack matches term,
// computed by the script from the folded stacks, not from the page.
import { ok, done, launch, watch } from './tap.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1240, height: 1000 } });
const errors = watch(page);
let answer = null; // text typed into a flame graph's search prompt
page.on('dialog', (d) => (answer === null ? d.dismiss() : d.accept(answer)));
fs.mkdirSync(cfg.artifacts, { recursive: true });

// The flame graph in iframe #id: its locator, and its frames as its own document sees them.
const graph = (id) => page.frameLocator('#' + id);
async function frames(id) {
  const fr = await (await page.locator('#' + id).elementHandle()).contentFrame();
  return fr.evaluate(() =>
    Array.from(document.getElementById('frames').children).map((g, i) => {
      const r = g.querySelector('rect');
      return { i, title: g.querySelector('title').textContent, x: +r.getAttribute('x'),
               w: +r.getAttribute('width'), y: +r.getAttribute('y'), fill: r.getAttribute('fill'),
               hidden: g.classList.contains('hide'), parent: g.classList.contains('parent') };
    }));
}

try {
  await page.goto(pathToFileURL(cfg.html).href);
  await page.waitForLoadState('load');
  const verdict = await page.locator('.verdict').textContent();
  ok(/p50 rose \d+ → \d+ ms at \d\d:\d\d:\d\d UTC/.test(verdict), 'verdict at the top in words', verdict);
  ok((await page.locator('svg.timeline').count()) >= 1, 'timeline charts drawn inline');
  const marks = await page.locator('svg.timeline .marker text').allTextContents();
  ok(marks.some((t) => /^p50 (step|ramp) \d+ → \d+ ms$/.test(t)), 'inflection marked and labelled on the timeline', marks);
  const ticks = await page.locator('svg.timeline .tl').allTextContents();
  ok(ticks.some((t) => /^\d\d:\d\d:\d\d$/.test(t)) && (await page.locator('svg.timeline').first().textContent()).includes('wall-clock time (UTC)'),
     'wall-clock axis with its zone');
  ok((await page.locator('iframe.fg').count()) === 3, 'three flame graphs: all, slowest 5 %, differential');
  await page.screenshot({ path: path.join(cfg.artifacts, 'report-top.png') });

  // ---- the slowest 5 % graph: zoom on click ----
  const f0 = await frames('fg-slow');
  const full = Math.max(...f0.map((f) => f.w));
  ok(f0.length > 5 && Math.abs(full - 1180) < 0.05, `slow graph loaded inside the page: ${f0.length} frames, root ${full} px`);
  const target = f0.filter((f) => f.w > 40 && f.w < 900).sort((a, b) => b.w - a.w)[0];
  await page.locator('#fg-slow').scrollIntoViewIfNeeded();
  await graph('fg-slow').locator('#frames > *').nth(target.i).click();
  const f1 = await frames('fg-slow');
  ok(Math.abs(f1[target.i].w - 1180) < 0.05 && f1.some((f) => f.hidden), `click zooms: ${target.w} px -> full width`, f1[target.i]);
  ok(await graph('fg-slow').locator('#unzoom').isVisible(), 'Reset Zoom shown inside the graph');
  await page.locator('#fg-slow').screenshot({ path: path.join(cfg.artifacts, 'report-flame-zoomed.png') });
  await graph('fg-slow').locator('#unzoom').click();
  ok((await frames('fg-slow')).every((f, i) => Math.abs(f.w - f0[i].w) < 1e-9 && !f.hidden), 'Reset Zoom restores every frame');

  // ---- search ----
  answer = cfg.term;
  await graph('fg-slow').locator('#search').click();
  const f2 = await frames('fg-slow');
  const re = new RegExp(cfg.term);
  const hits = f2.filter((f) => f.fill === 'rgb(230,0,230)');
  ok(hits.length > 0 && hits.every((f) => re.test(f.title)), `Search /${cfg.term}/ highlights ${hits.length} frames`);
  const m = await graph('fg-slow').locator('#matched').textContent();
  const pct = parseFloat(m.replace(/^Matched: /, ''));
  ok(Math.abs(pct - cfg.expect_pct) <= 0.1, `matched ${m} (from the folded stacks: ${cfg.expect_pct.toFixed(2)}%)`, m);
  await page.locator('#fg-slow').screenshot({ path: path.join(cfg.artifacts, 'report-flame-search.png') });

  // ---- the differential graph: red where the slow requests spend more ----
  const d0 = await frames('fg-diff');
  const red = d0.find((f) => re.test(f.title));
  ok(red && /^rgb\(255,\d+,\d+\)$/.test(red.fill), 'differential: the slow function is red', red);
  await page.screenshot({ path: path.join(cfg.artifacts, 'report-full.png'), fullPage: true });
  ok(errors.length === 0, 'no console errors, no script errors, nothing fetched', errors);
} catch (e) {
  ok(false, 'browser step threw: ' + String(e.message || e).split('\n')[0]);
}
await browser.close();
done();
