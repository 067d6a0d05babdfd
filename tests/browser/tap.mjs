// tap.mjs - what the browser tests share: TAP lines, and the system Chromium (Debian's
// package `chromium`, driven by playwright-core; no browser is downloaded).
import { chromium } from 'playwright-core';

let n = 0, failed = 0;

// "ok N - name" or "not ok N - name" with the diagnostic as a comment.
export function ok(cond, name, diag) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    if (diag !== undefined) console.log(`#   ${JSON.stringify(diag)}`);
  }
}

// The plan line and the exit status: 1 when a test failed.
export function done() {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
  });
}

// What a page must not do, collected as it happens: script errors, console errors, any
// fetch but of the file itself and its data: / blob: URLs, failed requests.  The array
// stays empty on a page that behaves; a test asserts that at its end.  errors: an array
// to add to (one for several pages), else a new one.
export function watch(page, errors = []) {
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  page.on('request', (r) => { if (!/^(file|data|blob|about):/.test(r.url())) errors.push('fetch ' + r.url()); });
  page.on('requestfailed', (r) => errors.push('request failed ' + r.url().slice(0, 80)));
  return errors;
}
