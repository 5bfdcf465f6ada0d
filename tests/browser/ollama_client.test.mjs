// Ollama's own JavaScript client (the `ollama` npm package, written by Ollama's authors) against
// the real swapd with fake backends on loopback (ephemeral ports). The fakes speak only OpenAI's
// API; every answer below went through swapd's translation. It lists, shows, chats and generates
// (streamed and not), calls a tool, sends an image, asks for JSON, embeds, reads /api/ps, unloads
// with keep_alive 0, and reads the client's errors for an unknown model and a model-file route.
//
//   node tests/browser/ollama_client.test.mjs --swapd build/bin/swapd --fake build/bin/fake-llama-server
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ollama } from 'ollama';
import { freePort, option, Steps } from './support.mjs';

const swapdBinary = resolve(option('--swapd', 'build/bin/swapd'));
const fakeBinary = resolve(option('--fake', 'build/bin/fake-llama-server'));
// Generous: a loaded 2-core machine, and sanitizer builds of swapd.
const TIMEOUT = 30_000;

const steps = new Steps();
const step = (name, body) => steps.run(name, body);

function check(condition, what) {
  if (!condition) throw new Error(`expected ${what}`);
}

async function waitFor(what, test) {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    if (await test().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// What a call that must fail threw: the client's ResponseError carries the HTTP status.
async function failure(call) {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const dir = mkdtempSync(join(tmpdir(), 'swapd-ollama-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = join(dir, 'config.yaml');
const model = (id, extra, portOf) => `
  ${id}:
    cmd: ${fakeBinary} --port ${portOf} --model ${id} --load-ms 200 --tokens-per-second 200
    proxy: http://127.0.0.1:${portOf}
${extra}`;
writeFileSync(config, `healthCheckTimeout: 60
store: {path: none}
models:${model('chatty', '    aliases: [chatty-alias]\n', await freePort())}${model('embedder', '', await freePort())}
groups:
  both: {swap: false, members: [chatty, embedder]}
`);

const swapd = spawn(swapdBinary, ['--config', config, '--listen', `127.0.0.1:${port}`], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
let swapdLog = '';
swapd.stderr.on('data', (chunk) => { swapdLog += chunk; });
const ollama = new Ollama({ host: base });

try {
  await waitFor('swapd to listen', async () => (await fetch(`${base}/health`)).ok);

  await step('version', async () => {
    const { version } = await ollama.version();
    check(typeof version === 'string' && version.length > 0, `a version, got ${version}`);
  });

  await step('list: every model of the config', async () => {
    const { models } = await ollama.list();
    const names = models.map((m) => m.name);
    check(names.includes('chatty') && names.includes('embedder'), `chatty and embedder in ${names}`);
    for (const m of models) check(typeof m.details === 'object', `details of ${m.name}`);
  });

  await step('show', async () => {
    const shown = await ollama.show({ model: 'chatty' });
    check(typeof shown.details === 'object', 'details');
    check(Array.isArray(shown.capabilities) && shown.capabilities.includes('completion'),
      `capabilities with completion, got ${JSON.stringify(shown.capabilities)}`);
  });

  let chatAnswer;
  await step('chat, not streamed: the first request loads the model', async () => {
    const answer = await ollama.chat({
      model: 'chatty', messages: [{ role: 'user', content: 'say three words' }], stream: false,
    });
    check(answer.model === 'chatty', `model chatty, got ${answer.model}`);
    check(answer.message.role === 'assistant' && answer.message.content.length > 0, 'an assistant message');
    check(answer.done === true && answer.done_reason === 'stop', `done with stop, got ${answer.done_reason}`);
    check(answer.eval_count > 0 && answer.prompt_eval_count > 0, 'token counts');
    check(answer.load_duration > 0, `a load duration, got ${answer.load_duration}`);
    chatAnswer = answer.message.content;
  });

  await step('chat, streamed: the same words in parts, then done', async () => {
    const parts = [];
    for await (const part of await ollama.chat({
      model: 'chatty-alias', messages: [{ role: 'user', content: 'say three words' }], stream: true,
    })) parts.push(part);
    check(parts.length > 2, `several parts, got ${parts.length}`);
    const last = parts.at(-1);
    check(last.done === true && last.eval_count > 0, 'a final part with counts');
    check(parts.slice(0, -1).every((p) => p.done === false), 'only the last part done');
    const text = parts.map((p) => p.message.content).join('');
    check(text === chatAnswer, `streamed "${text}" equal to "${chatAnswer}"`);
  });

  await step('chat with a tool: the call comes back as Ollama tool_calls', async () => {
    const answer = await ollama.chat({
      model: 'chatty',
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [{
        type: 'function',
        function: { name: 'get_weather', description: 'weather of a city',
          parameters: { type: 'object', properties: { text: { type: 'string' } } } },
      }],
    });
    const calls = answer.message.tool_calls;
    check(Array.isArray(calls) && calls.length === 1, `one tool call, got ${JSON.stringify(calls)}`);
    check(calls[0].function.name === 'get_weather', 'the tool by name');
    check(typeof calls[0].function.arguments === 'object', 'arguments as an object');
  });

  await step('chat with an image: it reaches the backend as an image part', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const answer = await ollama.chat({
      model: 'chatty', messages: [{ role: 'user', content: 'describe', images: [png] }],
    });
    // The fake backend begins its answer with the media type of each image it was sent.
    check(answer.message.content.startsWith('image/png'), `an answer about image/png, got "${answer.message.content}"`);
  });

  await step('chat with format json and options: JSON, cut at num_predict', async () => {
    const answer = await ollama.chat({
      model: 'chatty', format: 'json', options: { num_predict: 200, temperature: 0 },
      messages: [{ role: 'user', content: 'a JSON object please' }],
    });
    JSON.parse(answer.message.content);  // throws when it is not JSON
    // The fake cuts its answer at num_predict, as a model would: options reach the backend.
    const cut = await ollama.chat({
      model: 'chatty', options: { num_predict: 2 }, messages: [{ role: 'user', content: 'talk' }],
    });
    check(cut.eval_count === 2 && cut.done_reason === 'length', `2 tokens, length, got ${cut.eval_count} ${cut.done_reason}`);
  });

  await step('generate, not streamed and streamed', async () => {
    const whole = await ollama.generate({ model: 'chatty', prompt: 'count to four', stream: false });
    check(whole.response.length > 0 && whole.done === true, 'a response, done');
    check(whole.eval_count > 0, 'eval_count');
    let text = '';
    let last;
    for await (const part of await ollama.generate({ model: 'chatty', prompt: 'count to four', stream: true })) {
      text += part.response;
      last = part;
    }
    check(last.done === true, 'a final part');
    check(text === whole.response, `streamed "${text}" equal to "${whole.response}"`);
  });

  await step('generate raw: the client\'s own prompt, no template', async () => {
    const answer = await ollama.generate({
      model: 'chatty', raw: true, prompt: '<|fim_prefix|>def f(<|fim_suffix|>):<|fim_middle|>', stream: false,
    });
    check(answer.done === true && answer.response.length > 0, 'a response');
    const sent = await (await fetch(`${base}/upstream/chatty/last-request`)).json();
    check(sent.path === '/v1/completions', `the completions route, got ${sent.path}`);
  });

  await step('embed and embeddings', async () => {
    const { embeddings } = await ollama.embed({ model: 'embedder', input: ['one', 'two'] });
    check(embeddings.length === 2 && embeddings[0].length > 0, 'two vectors');
    check(embeddings[0].every((x) => typeof x === 'number'), 'numbers');
    const { embedding } = await ollama.embeddings({ model: 'embedder', prompt: 'one' });
    check(embedding.length === embeddings[0].length, 'the older route, one vector of the same size');
  });

  await step('ps: the running models', async () => {
    const { models } = await ollama.ps();
    const names = models.map((m) => m.name);
    check(names.includes('chatty') && names.includes('embedder'), `chatty and embedder running, got ${names}`);
  });

  await step('keep_alive 0 unloads: generate with an empty prompt, and after a chat', async () => {
    const unloaded = await ollama.generate({ model: 'embedder', prompt: '', keep_alive: 0 });
    check(unloaded.done === true && unloaded.done_reason === 'unload', `done_reason unload, got ${unloaded.done_reason}`);
    await ollama.chat({ model: 'chatty', messages: [{ role: 'user', content: 'bye' }], keep_alive: 0 });
    await waitFor('no model running', async () => (await ollama.ps()).models.length === 0);
  });

  await step('errors: an unknown model is a 404, a model-file route says why', async () => {
    const unknown = await failure(() => ollama.chat({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }));
    check(unknown.status_code === 404, `status 404, got ${unknown.status_code}`);
    check(/nope/.test(unknown.error), `the model named in "${unknown.error}"`);
    const pull = await failure(() => ollama.pull({ model: 'chatty', stream: false }));
    check(pull.status_code >= 400 && /config/.test(pull.error), `a clear refusal, got ${pull.status_code} "${pull.error}"`);
  });
} finally {
  swapd.kill('SIGTERM');
  await new Promise((r) => swapd.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

if (steps.failures > 0) {
  console.log(`${steps.failures} step(s) failed; swapd's log:\n${swapdLog.slice(-4000)}`);
  process.exit(1);
}
console.log('all steps passed');
