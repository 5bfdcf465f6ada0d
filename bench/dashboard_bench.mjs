// The dashboard's first load, as a browser sees it: Debian's headless chromium (playwright-core
// from tests/browser/, so `scripts/install-browser-test.sh` first) opens /ui/ of a real swapd with
// three fake models, RUNS times, each in a fresh browser context (nothing cached). Per load:
// the document's response end, DOMContentLoaded and load from the Navigation Timing API, and
// "live": until the /api/events stream is open and the Models table shows every model. Prints
// the median and worst of each, and the bytes the page transferred.
//
//   node bench/dashboard_bench.mjs [--runs 20] [--swapd build/bin/swapd] [--fake build/bin/fake-llama-server]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// playwright-core resolves from tests/browser/node_modules, beside support.mjs.
import { freePort, launchChromium, option } from '../tests/browser/support.mjs';

const runs = Number(option('--runs', '20'));
const swapdBinary = resolve(option('--swapd', 'build/bin/swapd'));
const fakeBinary = resolve(option('--fake', 'build/bin/fake-llama-server'));

const dir = mkdtempSync(join(tmpdir(), 'swapd-dashboard-bench-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let models = '';
for (const id of ['coder', 'helper', 'writer']) {
  const p = await freePort();
  models += `\n  ${id}:\n    cmd: ${fakeBinary} --port ${p} --model ${id}\n    proxy: http://127.0.0.1:${p}\n`;
}
writeFileSync(join(dir, 'config.yaml'), `models:${models}`);
const swapd = spawn(swapdBinary, ['--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
  { stdio: 'ignore', env: { ...process.env, STATE_DIRECTORY: dir } });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const worst = (xs) => Math.max(...xs);
let browser;
try {
  for (let i = 0; i < 200; i++) {
    try { if ((await fetch(`${base}/health`)).ok) break; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  // One request, so that the Activity history is not empty.
  await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'coder', messages: [{ role: 'user', content: 'hi' }] }) });
  browser = await launchChromium();
  const figures = { responseEnd: [], domContentLoaded: [], load: [], live: [], bytes: [] };
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const started = Date.now();
    await page.goto(`${base}/ui/`);
    await page.waitForSelector('#connection.live');
    await page.waitForFunction(() => document.querySelectorAll('#models-table tr[data-model]').length === 3);
    const live = Date.now() - started;
    const t = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const bytes = performance.getEntriesByType('resource').reduce((sum, r) => sum + r.transferSize, nav.transferSize);
      return { responseEnd: nav.responseEnd, domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, bytes };
    });
    figures.responseEnd.push(t.responseEnd);
    figures.domContentLoaded.push(t.domContentLoaded);
    figures.load.push(t.load);
    figures.live.push(live);
    figures.bytes.push(t.bytes);
    await context.close();
  }
  console.log(`${runs} first loads of /ui/ in fresh browser contexts\n`);
  console.log('| figure | median | worst |');
  console.log('| --- | --- | --- |');
  const ms = (x) => `${x.toFixed(1)} ms`;
  console.log(`| document received (responseEnd) | ${ms(median(figures.responseEnd))} | ${ms(worst(figures.responseEnd))} |`);
  console.log(`| DOMContentLoaded | ${ms(median(figures.domContentLoaded))} | ${ms(worst(figures.domContentLoaded))} |`);
  console.log(`| load event | ${ms(median(figures.load))} | ${ms(worst(figures.load))} |`);
  console.log(`| live: events open, models listed | ${ms(median(figures.live))} | ${ms(worst(figures.live))} |`);
  console.log(`| bytes transferred (page and files) | ${median(figures.bytes)} | |`);
} finally {
  if (browser) await browser.close();
  swapd.kill('SIGTERM');
  await new Promise((r) => swapd.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
