// scripts/bench/page-timing.mjs FILE [RUNS]: load a page in headless Chromium (Debian's, through
// playwright-core from tests/browser's lock file) RUNS times and print, per run, one JSON line of
// the browser's own timings: first contentful paint, DOMContentLoaded and load, in ms; where the
// page has the report's explorer, when it was ready (its data inflated and the first graph drawn)
// and how long re-rendering a selection takes (a tenth of the time range, then all of it).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../tests/browser/package.json'));
const { chromium } = require('playwright-core');
const file = path.resolve(process.argv[2]);
const runs = Number(process.argv[3] || 3);
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
});
for (let i = 0; i < runs; i++) {
    const page = await browser.newPage();
    await page.goto('file://' + file, { waitUntil: 'load' });
    const t = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        return { fcp: fcp ? fcp.startTime : null, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd };
    });
    if (await page.evaluate(() => !!document.getElementById('sf-explore-data'))) {
        await page.waitForFunction(() => document.documentElement.dataset.explore, null, { timeout: 600000 });
        Object.assign(t, await page.evaluate(() => {
            const ready = performance.now(); /* an upper bound: when the wait saw it */
            const tl = document.querySelector('svg.timeline');
            const t0 = +tl.dataset.t0, t1 = +tl.dataset.t1;
            const a = Math.round(t0 + (t1 - t0) * 0.45), b = Math.round(t0 + (t1 - t0) * 0.55);
            let s = performance.now();
            window.sfExplore.select({ from: a, to: b });
            const tenth = performance.now() - s;
            s = performance.now();
            window.sfExplore.select({ from: null, to: null });
            return { explore: ready, tenth, all: performance.now() - s };
        }));
    }
    console.log(JSON.stringify(t));
    await page.close();
}
await browser.close();
