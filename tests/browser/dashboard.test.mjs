// The dashboard in a real browser: Debian's headless chromium, driven by playwright-core, against
// the real swapd with fake backends on loopback (ephemeral ports). It loads a model from the
// Models page and watches it go starting -> ready live, chats in the Playground and sees the tokens
// stream, finds the request in Activity, sees log lines arrive, asks the Groups page what a request
// would stop, opens a request's capture from Activity, shows the Scoreboard of a store seeded with
// bench rows (by bench-seed, built beside swapd), and fails on any console error. Screenshots go to
// $SCREENSHOT_DIR when set.
//
//   node tests/browser/dashboard.test.mjs --swapd build/bin/swapd --fake build/bin/fake-llama-server
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort, launchChromium, option, Steps } from './support.mjs';

const swapdBinary = resolve(option('--swapd', 'build/bin/swapd'));
const fakeBinary = resolve(option('--fake', 'build/bin/fake-llama-server'));
const benchSeedBinary = resolve(option('--bench-seed', join(dirname(swapdBinary), 'bench-seed')));
const screenshots = process.env.SCREENSHOT_DIR;
// Generous: a loaded 2-core machine, and sanitizer builds of swapd.
const TIMEOUT = 30_000;

async function waitFor(what, check, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

const steps = new Steps();
const step = (name, body) => steps.run(name, body);

const dir = mkdtempSync(join(tmpdir(), 'swapd-browser-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = join(dir, 'config.yaml');
const model = (id, loadMs, tokensPerSecond, portOf) => `
  ${id}:
    name: ${id} (fake)
    cmd: ${fakeBinary} --port ${portOf} --model ${id} --load-ms ${loadMs} --tokens-per-second ${tokensPerSecond} --log-lines 5
    proxy: http://127.0.0.1:${portOf}
`;
const ports = [await freePort(), await freePort(), await freePort()];
const store = join(dir, 'swapd.db');
writeFileSync(config, `healthCheckTimeout: 60
sendLoadingState: true
store: {path: ${store}}
models:${model('coder', 1500, 20, ports[0])}${model('helper', 300, 40, ports[1])}${model('writer', 300, 40, ports[2])}
groups:
  duo:
    swap: false
    exclusive: true
    members: [coder, helper]
`);

// `swapd bench` results in the store, as a bench run leaves them: a solo row whose gates pass
// and a duo row that failed a gate on a noisy machine; and a swap row (below).
const benchRow = (row) => execFileSync(benchSeedBinary, [store, 'host: browser-test (fake CPU, 2 cores)', JSON.stringify(row)]);
// The swap: writer in place of coder, its files cold (written first, so shown last).
benchRow({ model: 'writer', mode: 'swap', partner: 'coder', cache: 'cold', runs: 3, load_seconds: 0.31, ttft_ms: 420,
  disk_read_bytes: 8388608, page_cache_before: 0.02, detail: 'prefetch on', finished_at: 1764999000 });
benchRow({ model: 'coder', mode: 'solo', runs: 3, load_seconds: 1.5, ttft_ms: 180, prefill_tps: 812.5, decode_tps: 25.25,
  tps_source: 'timings', gates: [{ gate: 'json-object', passed: true }], finished_at: 1765000000 });
benchRow({ model: 'helper', mode: 'duo', partner: 'coder', runs: 3, load_seconds: -1, ttft_ms: 95, prefill_tps: 400, decode_tps: 40,
  tps_source: 'stream', gates: [{ gate: 'json-array', passed: false, reason: 'not valid JSON at byte 3: unexpected end' }],
  noisy: true, noise: 'other processes used 1.3 cores (limit 0.5)', finished_at: 1765000100 });

const swapd = spawn(swapdBinary, ['--config', config, '--listen', `127.0.0.1:${port}`], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, XDG_STATE_HOME: dir, XDG_CACHE_HOME: dir },
});
let swapdOutput = '';
swapd.stdout.on('data', (d) => { swapdOutput += d; });
swapd.stderr.on('data', (d) => { swapdOutput += d; });
const swapdExited = new Promise((done) => swapd.on('exit', (code, signal) => done({ code, signal })));

let browser;
try {
  await waitFor('swapd to listen', async () => (await fetch(`${base}/health`)).ok);
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  const consoleErrors = [];
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  page.setDefaultTimeout(TIMEOUT);
  const shot = async (name) => {
    if (!screenshots) return;
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, `${name}.png`) });
  };

  await step('GET / leads to the dashboard, the event stream goes live', async () => {
    await page.goto(`${base}/`);
    if (!page.url().endsWith('/ui/')) throw new Error(`landed on ${page.url()}`);
    await page.waitForSelector('#connection.live');
    await page.waitForSelector('#models-table tr[data-model="coder"][data-state="stopped"]');
  });

  await step('Load on the Models page: starting, then ready, live', async () => {
    await page.click('#models-table tr[data-model="coder"] button');
    await page.waitForSelector('#models-table tr[data-model="coder"][data-state="starting"]');
    await page.waitForSelector('#models-table tr[data-model="coder"][data-state="starting"] .progress');
    await page.waitForSelector('#models-table tr[data-model="coder"][data-state="ready"]');
    await waitFor('its pid', async () => /\d+/.test(await page.textContent('#models-table tr[data-model="coder"] td:nth-child(3)')));
  });

  await step('Playground: the answer streams in', async () => {
    await page.click('nav a[data-page="playground"]');
    await page.selectOption('#chat-model', 'coder');
    await page.fill('#chat-input', 'Say something');
    await page.click('#chat-send');
    // At 20 tokens/s the fake backend's answer takes about a second: it must grow in steps.
    const lengths = new Set();
    await waitFor('a finished answer', async () => {
      const text = await page.textContent('.message.assistant .content');
      if (text.length > 0) lengths.add(text.length);
      return (await page.textContent('.message.assistant .meta')).includes('t/s');
    });
    if (lengths.size < 2) throw new Error(`the answer came in ${lengths.size} step(s), not streamed`);
    if (await page.$('.message.assistant.error')) throw new Error(await page.textContent('.message.assistant .meta'));
  });

  await step('Playground: a model that must load first shows the loading state', async () => {
    await page.selectOption('#chat-model', 'writer');
    await page.fill('#chat-input', 'And you?');
    await page.click('#chat-send');
    await waitFor('the second answer', async () => {
      const metas = await page.$$eval('.message.assistant .meta', (nodes) => nodes.map((n) => n.textContent));
      return metas.length === 2 && metas[1].includes('t/s');
    });
    const reasoning = await page.$$eval('.message.assistant .reasoning', (nodes) => nodes.map((n) => n.textContent));
    if (!reasoning[1].includes('loading model: writer')) throw new Error(`loading text: ${reasoning[1]}`);
    await shot('playground');
  });

  await step('Activity: the request is listed with its speed', async () => {
    await page.click('nav a[data-page="activity"]');
    await page.waitForSelector('#activity-table tbody tr[data-id]');
    await page.waitForSelector('#activity-table tbody tr[data-id="2"]');
    const rows = await page.$$eval('#activity-table tbody tr[data-id]', (nodes) => nodes.map((n) => n.textContent));
    if (!rows.some((r) => r.includes('coder') && r.includes('/v1/chat/completions'))) throw new Error(`rows: ${rows}`);
    await waitFor('the stats cards', async () => (await page.textContent('#stats')).includes('Decode speed'));
    await page.click('#activity-table th[data-sort="duration"]');
    await page.waitForSelector('#activity-table th.sorted-desc[data-sort="duration"]');
  });

  await step('Logs: history and new lines arrive live', async () => {
    await page.click('nav a[data-page="logs"]');
    await waitFor('the backend log history', async () => (await page.textContent('#log')).includes('[coder]'));
    // The writer runs since the previous step: its stop is a line the page has not seen yet.
    if ((await page.textContent('#log')).includes('writer: stopped')) throw new Error('stopped already');
    await fetch(`${base}/api/models/unload/writer`, { method: 'POST' });
    await waitFor('a new line about the unload', async () => (await page.textContent('#log')).includes('writer: stopped'));
    await page.selectOption('#log-source', 'upstream');
    const upstream = await page.textContent('#log');
    if (upstream.includes('writer: stopped')) throw new Error('the source filter let swapd lines through');
    if (!upstream.includes('[writer]')) throw new Error('no backend lines under the upstream filter');
  });

  await step('Groups: what a request for writer would stop, and why', async () => {
    await fetch(`${base}/models/load`, { method: 'POST', body: JSON.stringify({ model: 'helper' }) });
    await page.click('nav a[data-page="groups"]');
    await page.waitForSelector('.card[data-group="duo"]');
    await page.waitForSelector('.card[data-group="duo"] li[data-model="helper"] .state.ready');
    await page.selectOption('#plan-model', 'writer');
    await waitFor('the plan', async () => (await page.textContent('#plan')).includes('helper stops'));
    const plan = await page.textContent('#plan');
    if (!plan.includes('exclusive')) throw new Error(`plan: ${plan}`);
    await shot('groups');
  });

  await step('Models: both duo members run together', async () => {
    await page.click('nav a[data-page="models"]');
    await page.click('#models-table tr[data-model="coder"] button');
    await page.waitForSelector('#models-table tr[data-model="coder"][data-state="ready"]');
    await page.waitForSelector('#models-table tr[data-model="helper"][data-state="ready"]');
    // The memory sampler measures a new backend within a few seconds.
    await waitFor('the memory of both', async () => (await page.textContent('#models-table tr[data-model="coder"] td:nth-child(4)')).includes('MiB'));
    await shot('models');
  });

  await step('Activity: a request in flight shows its session; Cancel ends it', async () => {
    await page.click('nav a[data-page="activity"]');
    // 400 tokens at 20 a second: a 20-second stream unless cancelled.
    const started = Date.now();
    const answer = fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Session-ID': 'browser-session-1' },
      body: JSON.stringify({ model: 'coder', stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'long' }] }),
    }).then((res) => res.text());
    const row = '#inflight-table tbody tr[data-id]';
    await waitFor('the request in flight', async () => (await page.textContent('#inflight-table tbody')).includes('browser-session-1'));
    await shot('activity');
    await page.click(`${row} button`);
    const text = await answer;
    if (!text.includes('cancelled')) throw new Error(`the stream ended without the cancel: ${text.slice(-300)}`);
    if (Date.now() - started > 15_000) throw new Error('the stream ran on after the cancel');
    await waitFor('the row to go', async () => (await page.$(row)) === null);
  });

  await step('Activity: the capture of a chat request shows its request body and its answer', async () => {
    await page.click('nav a[data-page="activity"]');
    const prompt = 'What does a capture hold?';
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer not-a-real-key' },
      body: JSON.stringify({ model: 'helper', max_tokens: 6, messages: [{ role: 'user', content: prompt }] }),
    });
    const answer = (await res.json()).choices[0].message.content;
    let id;
    await waitFor('the request in the history', async () => {
      const newest = await (await fetch(`${base}/api/metrics/activity?limit=1`)).json();
      id = newest.data[0].id;
      return newest.data[0].model === 'helper' && newest.data[0].has_capture;
    });
    const button = `#activity-table tbody tr[data-id="${id}"] button.capture`;
    await page.waitForSelector(button);
    await page.click(button);
    await page.waitForSelector('#capture-dialog[open]');
    const part = (name) => page.textContent(`#capture-dialog pre[data-part="${name}"]`);
    await waitFor('the capture of that request', async () => (await part('request-body')).includes(prompt));
    if (!(await part('response-body')).includes(JSON.stringify(answer))) throw new Error(`response: ${await part('response-body')}`);
    if (!(await part('request-headers')).includes('Authorization: [REDACTED]')) throw new Error(`headers: ${await part('request-headers')}`);
    if ((await page.textContent('#capture-dialog')).includes('not-a-real-key')) throw new Error('the API key is shown');
    await shot('capture');
    await page.click('#capture-close');
    await page.waitForSelector('#capture-dialog:not([open])', { state: 'attached' });
  });

  await step('Scoreboard: the bench results from the store (solo, duo, swap), failures explained on hover', async () => {
    await page.click('nav a[data-page="scoreboard"]');
    const coder = '#scoreboard-table tbody tr[data-model="coder"]';
    await page.waitForSelector(coder);
    const cells = await page.$$eval(`${coder} td`, (nodes) => nodes.map((n) => n.textContent));
    if (cells[2] !== '25.3' || cells[3] !== '812.5' || !cells[6].startsWith('pass')) throw new Error(`coder: ${cells}`);
    const helper = '#scoreboard-table tbody tr[data-model="helper"]';
    const mode = await page.textContent(`${helper} td:nth-child(2)`);
    if (mode !== 'duo with coder') throw new Error(`helper's mode: ${mode}`);
    const gates = await page.getAttribute(`${helper} td.gates.fail`, 'title');
    if (!gates.includes('not valid JSON at byte 3')) throw new Error(`gates title: ${gates}`);
    const noisy = await page.getAttribute(`${helper} td.noisy`, 'title');
    if (!noisy.includes('1.3 cores')) throw new Error(`noisy title: ${noisy}`);
    // The newest first: the duo row was written last.
    const order = await page.$$eval('#scoreboard-table tbody tr[data-model]', (rows) => rows.map((r) => r.dataset.model));
    if (order.join() !== 'helper,coder,writer') throw new Error(`order: ${order}`);
    // A swap: what it replaced, the cache, and what it read from disk.
    const swap = await page.textContent('#scoreboard-table tbody tr[data-mode="swap"] td:nth-child(2)');
    if (swap !== 'swap after coder, coldread 8.0 MiB, 2% cached before') throw new Error(`swap row: ${swap}`);
    await shot('scoreboard');
    if (consoleErrors.length) throw new Error(consoleErrors.join('\n'));
  });

  await step('no console errors', async () => {
    if (consoleErrors.length) throw new Error(consoleErrors.join('\n'));
  });
} catch (error) {
  steps.fail(error.message);
} finally {
  if (browser) await browser.close();
  swapd.kill('SIGTERM');
  const exit = await swapdExited;
  if (exit.code !== 0) steps.fail(`swapd exited with ${exit.code ?? exit.signal}`);
  if (steps.failures) console.log(`--- swapd's output ---\n${swapdOutput.slice(-4000)}`);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(steps.failures ? 1 : 0);
