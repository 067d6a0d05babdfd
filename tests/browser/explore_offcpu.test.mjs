// explore_offcpu.test.mjs - the report page's explorer on off-CPU time, in a real browser
// (TAP output).  Usage: node explore_offcpu.test.mjs CONFIG.json, CONFIG made by
// tests/spanfold/t_report_explore_offcpu.sh:
//   { "html": PAGE, "hash": "#from=...&to=...", "cli": FOLDED (spanfold stacks --offcpu
//     --during of the same range), "cpu": FOLDED (the same without --offcpu),
//     "request": { "span": ID, "offcpu": N (its intervals, from the database) },
//     "artifacts": DIR }
import { ok, done, launch, watch } from './tap.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1240, height: 1000 } });
const errors = watch(page);
const ready = () => page.waitForFunction(() => document.documentElement.dataset.explore === 'ready', null,
                                         { timeout: 20000 });
try {
  await page.goto(pathToFileURL(cfg.html).href + cfg.hash + '&what=offcpu');
  await ready();
  const sel = await page.evaluate(() => window.sfExplore.selection());
  ok(sel.what === 'offcpu', 'the fragment opens the off-CPU view', sel);
  const folded = await page.evaluate(() => window.sfExplore.folded());
  ok(folded === cfg.cli, `off-CPU folds of the range equal spanfold stacks --offcpu --during (${cfg.cli.split('\n').length - 1} stacks)`,
     folded.slice(0, 300));
  ok(/off CPU attributed/.test(await page.locator('#ex-status').textContent()), '#ex-status says off CPU');
  await page.locator('#explore').screenshot({ path: path.join(cfg.artifacts, 'explore-offcpu.png') });
  await page.locator('#ex-what-cpu').click();
  ok(!/what=/.test(new URL(page.url()).hash) && (await page.evaluate(() => window.sfExplore.folded())) === cfg.cpu,
     'On CPU: the fragment drops what=, the folds are the CPU samples\' of the same range');
  await page.locator(`#ex-slowest tr[data-span="${cfg.request.span}"]`).click();
  const n = await page.locator('#ex-request rect.offcpu').count();
  ok(n === cfg.request.offcpu, `request ${cfg.request.span}: ${n} off-CPU intervals drawn (database: ${cfg.request.offcpu})`);
  ok(errors.length === 0, 'no console errors, no script errors, nothing fetched', errors);
} catch (e) {
  ok(false, 'browser step threw: ' + String(e.message || e).split('\n')[0]);
}
await browser.close();
done();
