// What the Node.js tests (and bench/dashboard_bench.mjs) share: their command-line options, a free
// loopback port, named steps, and Debian's chromium launched headless as this machine allows.
import { createServer } from 'node:net';
import { chromium } from 'playwright-core';

// The value after `name` in argv, else `fallback`.
export function option(name, fallback) {
  const args = process.argv.slice(2);
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
}

// A loopback TCP port that was free a moment ago (the OS picked it).
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

// $CHROMIUM or /usr/bin/chromium, headless. As root it needs --no-sandbox; the network flags keep
// it from calling out (this machine's closed network refuses those connections).
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Named test steps: each runs, says `ok` or `FAIL` with its time; a failure is counted and the
// next step runs.
export class Steps {
  failures = 0;

  async run(name, body) {
    const started = Date.now();
    try {
      await body();
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (error) {
      this.fail(`${name}: ${error.message}`);
    }
  }

  fail(message) {
    this.failures++;
    console.log(`FAIL ${message}`);
  }
}
