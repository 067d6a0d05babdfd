// consumers.mjs - read spanfold-export's pprof and speedscope files back with the
// tools they are for, and print TAP.
//   node consumers.mjs PPROF.gz SPEEDSCOPE.json WANT_SAMPLES WANT_LABELLED ARTIFACT_DIR
// pprof: decoded by the pprof-format package (the decoder dd-trace and others use):
//   total sample count and span-labelled count must equal the database's.
// speedscope: loaded into speedscope's own app (the npm package's release build)
//   in headless Chromium via #profileURL; the app must render a profile and offer
//   as many profiles as the file has.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { Profile } from 'pprof-format';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const [pprofPath, ssPath, wantSamples, wantLabelled, artifacts] = process.argv.slice(2);
let n = 0, failed = 0;
const tap = (ok, name, detail) => {
  n++;
  console.log(`${ok ? '' : 'not '}ok ${n} - ${name}`);
  if (!ok) { failed++; if (detail) console.log(`#   ${detail}`); }
};

// ---- pprof
{
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(pprofPath)));
  const st = p.stringTable.strings;
  let total = 0, labelled = 0, bad = 0;
  for (const s of p.sample) {
    total += Number(s.value[0]);
    const keys = s.label.map((l) => st[Number(l.key)]);
    if (keys.includes('span_id')) labelled += Number(s.value[0]);
    for (const id of s.locationId) if (Number(id) < 1 || Number(id) > p.location.length) bad++;
  }
  tap(st[0] === '', 'pprof: string_table[0] is empty');
  tap(total === Number(wantSamples), `pprof: ${total} samples, as in the database`, `want ${wantSamples}`);
  tap(labelled === Number(wantLabelled), `pprof: ${labelled} samples carry span_id labels, as attributed in the database`, `want ${wantLabelled}`);
  tap(bad === 0, 'pprof: every location id resolves');
  const types = p.sampleType.map((v) => `${st[Number(v.type)]}/${st[Number(v.unit)]}`).join(',');
  tap(types === 'samples/count,cpu/nanoseconds', `pprof: sample types ${types}`);
}

// ---- speedscope in its own app
const ss = JSON.parse(fs.readFileSync(ssPath, 'utf8'));
const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const file = url.pathname === '/profile.json' ? ssPath : path.join(release, path.normalize(url.pathname).replace(/^\/+/, '') || 'index.html');
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    const ext = path.extname(file);
    const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm' }[ext] || 'application/octet-stream';
    res.writeHead(200, { 'content-type': type });
    res.end(data);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`http://127.0.0.1:${port}/profile.json`)}`);
  // the toolbar shows "<profile name> (1/N)" once a profile is loaded
  const want = `(1/${ss.profiles.length})`;
  let text = '';
  for (let i = 0; i < 50 && !text.includes(want); i++) {
    await page.waitForTimeout(200);
    text = await page.evaluate(() => document.body.innerText);
  }
  tap(text.includes(want), `speedscope: the app loads the file and offers ${ss.profiles.length} profiles`, text.slice(0, 200));
  tap(text.includes(ss.profiles[0].name.slice(0, 30)), 'speedscope: the first profile\'s name is shown', ss.profiles[0].name);
  const painted = await page.evaluate(() => {
    const c = [...document.querySelectorAll('canvas')].sort((a, b) => b.width * b.height - a.width * a.height)[0];
    if (!c) return 0;
    const d = c.getContext('2d')?.getImageData(0, 0, c.width, c.height)?.data;
    if (!d) return -1; // webgl canvas: count on the screenshot instead
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  });
  if (artifacts) {
    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'speedscope.png') });
  }
  const shot = await page.screenshot();
  tap(painted !== 0 && shot.length > 20000, `speedscope: a flame graph is painted (${painted < 0 ? 'webgl' : painted + ' colours'}, screenshot ${shot.length} bytes)`);
  tap(errors.length === 0, 'speedscope: no page errors', errors.join('; '));
} finally {
  await browser.close();
  server.close();
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
