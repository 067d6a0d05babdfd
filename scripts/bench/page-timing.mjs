// scripts/bench/page-timing.mjs FILE [RUNS]: load a page in headless Chromium (Debian's, through
// playwright-core from tests/browser's lock file) RUNS times and print, per run, one JSON line of
// the browser's own timings: first contentful paint, DOMContentLoaded and load, in ms.
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
    console.log(JSON.stringify(t));
    await page.close();
}
await browser.close();
