// swapd's dashboard: one EventSource on /api/events keeps every page live; the pages read
// swapd's own JSON API. Plain JavaScript, no build step, no request to any other server.
'use strict';

const $ = (selector, root = document) => root.querySelector(selector);

// Builds an element: el('td', {class: 'num'}, 'text', child, ...).
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child);
  }
  return node;
}

const state = {
  models: [],                // modelStatus: [{id, name, description, state, aliases, ...}]
  details: new Map(),        // id -> /api/models entry (pid, memory, counters)
  loading: new Map(),        // id -> latest `loading` event
  stopping: new Map(),       // id -> why it is stopping
  inflight: new Map(),       // id -> in-flight entry
  groups: [],
  logs: [],                  // {source, model, text}
  page: 'models',
};

// ---------------------------------------------------------------- helpers

async function api(path, options = {}) {
  const res = await fetch(path, options);
  const text = await res.text();
  let body = text;
  try { body = JSON.parse(text); } catch { /* a text answer */ }
  if (!res.ok) {
    const message = body && body.error ? (body.error.message || body.error) : text;
    throw new Error(`${res.status}: ${message || res.statusText}`);
  }
  return body;
}

let toastTimer;
function toast(message) {
  const box = $('#toast');
  box.textContent = message;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 6000);
}

function bytes(n) {
  if (n === undefined || n === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
const fixed = (n, digits = 1) => (typeof n === 'number' && n > 0 ? n.toFixed(digits) : '');
const seconds = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

// Runs `fn` at most once per `ms`, the last call winning.
function throttle(fn, ms) {
  let timer = null;
  let last = 0;
  return () => {
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(() => { timer = null; last = Date.now(); fn(); }, wait);
  };
}

// ---------------------------------------------------------------- live events

function connectEvents() {
  const source = new EventSource('/api/events');
  const connection = $('#connection');
  source.onopen = () => {
    connection.textContent = 'live';
    connection.classList.add('live');
    state.logs = [];  // the stream sends the log history again on every connect
    state.inflight.clear();
  };
  source.onerror = () => {  // EventSource connects again by itself
    connection.textContent = 'reconnecting';
    connection.classList.remove('live');
  };
  source.onmessage = (event) => {
    let frame;
    try {
      frame = JSON.parse(event.data);
      frame.data = JSON.parse(frame.data);
    } catch {
      return;
    }
    const handle = handlers[frame.type];
    if (handle) handle(frame.data);
  };
}

const refreshDetails = throttle(loadDetails, 400);
const refreshGroups = throttle(loadGroups, 400);
const refreshActivity = throttle(() => { if (state.page === 'activity') loadActivity(); }, 1000);
const renderLogsSoon = throttle(() => { if (state.page === 'logs') renderLogs(); }, 150);

const handlers = {
  modelStatus(models) {
    state.models = models;
    for (const m of models) {
      if (m.state !== 'starting') state.loading.delete(m.id);
      if (m.state !== 'stopping') state.stopping.delete(m.id);
    }
    renderModelLists();
    renderModels();
    refreshDetails();
    if (state.page === 'groups') refreshGroups();
  },
  loading(progress) {
    state.loading.set(progress.model, progress);
    renderModels();
  },
  stopping(event) {
    state.stopping.set(event.model, event.reason);
    renderModels();
  },
  logData(event) {
    for (const line of event.data.split('\n')) {
      if (line === '') continue;
      const match = event.source === 'upstream' ? /^\[([^\]]+)\] /.exec(line) : null;
      state.logs.push({ source: event.source, model: match ? match[1] : '', text: line });
    }
    if (state.logs.length > 5000) state.logs.splice(0, state.logs.length - 5000);
    renderLogsSoon();
  },
  activity() { refreshActivity(); },
  inflight(event) {
    if (event.operation === 'snapshot') {
      state.inflight.clear();
      for (const r of event.requests || []) state.inflight.set(String(r.id), r);
    } else if (event.operation === 'upsert' && event.request) {
      state.inflight.set(String(event.request.id), event.request);
    } else if (event.operation === 'remove') {
      state.inflight.delete(String(event.id));
    }
    if (state.page === 'activity') renderInflight();
  },
};

// ---------------------------------------------------------------- models

async function loadDetails() {
  try {
    const body = await api('/api/models');
    state.details = new Map(body.models.map((m) => [m.id, m]));
    renderModels();
  } catch (error) {
    toast(`GET /api/models: ${error.message}`);
  }
}

function localModels() { return state.models.filter((m) => !m.peerID); }

function stateCell(model) {
  const detail = state.details.get(model.id) || {};
  const failed = model.state === 'stopped' && detail.state === 'failed';
  const shown = failed ? 'failed' : model.state;
  const cell = el('td', {}, el('span', { class: `state ${shown}` }, shown));
  const why = state.stopping.get(model.id);
  if (model.state === 'stopping' && why) cell.append(el('span', { class: 'muted small' }, ` (${why})`));
  const progress = state.loading.get(model.id);
  if (model.state === 'starting') {
    const known = progress && typeof progress.progress === 'number';
    const bar = el('div', { class: known ? 'progress' : 'progress unknown' }, el('div'));
    if (known) bar.firstChild.style.width = `${Math.round(progress.progress * 100)}%`;
    cell.append(bar);
    if (known && typeof progress.eta_seconds === 'number') {
      cell.append(el('div', { class: 'muted small' }, `about ${Math.ceil(progress.eta_seconds)} s left`));
    }
  }
  if (failed && (model.last_error || detail.last_error)) {
    cell.append(el('div', { class: 'error-text' }, model.last_error || detail.last_error));
  }
  return cell;
}

function renderModels() {
  const body = $('#models-table tbody');
  const models = localModels();
  body.replaceChildren(...models.map((model) => {
    const detail = state.details.get(model.id) || {};
    // The last sample stays in /api/models after a stop: shown only while the model runs.
    const measured = detail.memory && detail.memory.running ? detail.memory.measured : null;
    const vram = measured && measured.vram_bytes ? Object.values(measured.vram_bytes).reduce((a, b) => a + b, 0) : 0;
    const up = model.state === 'ready' || model.state === 'starting';
    const action = up
      ? el('button', { type: 'button', onclick: () => unload(model.id) }, 'Unload')
      : el('button', { type: 'button', class: 'primary', onclick: () => load(model.id), disabled: model.state === 'stopping' }, 'Load');
    return el('tr', { 'data-model': model.id, 'data-state': model.state },
      el('td', {},
        el('div', { class: 'model-name', title: model.description || '' }, model.id),
        model.name ? el('div', { class: 'muted small' }, model.name) : null,
        model.aliases && model.aliases.length ? el('div', { class: 'aliases' }, `aliases: ${model.aliases.join(', ')}`) : null),
      stateCell(model),
      el('td', { class: 'num' }, detail.pid ? String(detail.pid) : ''),
      el('td', { class: 'num' }, measured ? bytes(measured.rss_bytes) : ''),
      el('td', { class: 'num' }, vram ? bytes(vram) : ''),
      el('td', { class: 'num' }, detail.in_flight ? String(detail.in_flight) : ''),
      el('td', { class: 'num' }, detail.queued ? String(detail.queued) : ''),
      el('td', { class: 'num' }, fixed(detail.generation_tokens_per_second)),
      el('td', {}, action));
  }));
  if (models.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 9 }, 'no models')));
  const ready = models.filter((m) => m.state === 'ready').length;
  $('#models-summary').textContent = `${ready} of ${models.length} ready`;
}

async function load(id) {
  try {
    await api('/models/load', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: id }) });
  } catch (error) {
    toast(`load ${id}: ${error.message}`);
  }
}

async function unload(id) {
  try {
    await api(`/api/models/unload/${encodeURIComponent(id)}`, { method: 'POST' });
  } catch (error) {
    toast(`unload ${id}: ${error.message}`);
  }
}

// The model pickers of the other pages follow the model list.
function renderModelLists() {
  const ids = localModels().map((m) => m.id);
  const choices = [];
  for (const m of state.models) {
    if (m.unlisted) continue;
    choices.push(m.id);
    for (const alias of m.aliases || []) choices.push(alias);
  }
  fillSelect($('#chat-model'), choices, false);
  fillSelect($('#plan-model'), ids, false);
  fillSelect($('#activity-model'), ids, true);
  fillSelect($('#log-model'), ids, true);
}

function fillSelect(select, values, withAll) {
  const current = select.value;
  const options = values.map((v) => el('option', { value: v }, v));
  if (withAll) options.unshift(el('option', { value: '' }, 'all'));
  select.replaceChildren(...options);
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}

// ---------------------------------------------------------------- activity

const activityView = { page: 1, sort: 'id', order: 'desc', totalPages: 1 };

async function loadActivity() {
  const query = new URLSearchParams({ limit: 25, page: activityView.page, sort: activityView.sort, order: activityView.order });
  const model = $('#activity-model').value;
  if (model) query.append('model', model);
  const stats = new URLSearchParams(model ? { model } : {});
  try {
    const [rows, totals] = await Promise.all([
      api(`/api/metrics/activity?${query}`),
      api(`/api/metrics/stats?${stats}`),
    ]);
    activityView.totalPages = Math.max(1, rows.total_pages);
    renderActivity(rows);
    renderStats(totals);
  } catch (error) {
    toast(`activity: ${error.message}`);
  }
  renderInflight();
}

function renderActivity(rows) {
  const body = $('#activity-table tbody');
  body.replaceChildren(...rows.data.map((r) => el('tr', { 'data-id': r.id },
    el('td', { class: 'num' }, String(r.id)),
    el('td', {}, new Date(r.timestamp).toLocaleTimeString()),
    el('td', {}, r.model),
    el('td', {}, r.req_path),
    el('td', { class: 'num', title: r.error_msg || '' }, String(r.resp_status_code)),
    el('td', { class: 'num' }, r.tokens.cache_tokens > 0 ? String(r.tokens.cache_tokens) : ''),
    el('td', { class: 'num' }, String(r.tokens.input_tokens)),
    el('td', { class: 'num' }, String(r.tokens.output_tokens)),
    el('td', { class: 'num' }, fixed(r.tokens.prompt_per_second)),
    el('td', { class: 'num' }, fixed(r.tokens.tokens_per_second)),
    el('td', { class: 'num' }, seconds(r.duration_ms)))));
  if (rows.data.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 11 }, 'no requests yet')));
  $('#activity-page').textContent = `page ${rows.page} of ${activityView.totalPages} (${rows.total} requests)`;
  $('#activity-prev').disabled = activityView.page <= 1;
  $('#activity-next').disabled = activityView.page >= activityView.totalPages;
  for (const th of document.querySelectorAll('#activity-table th[data-sort]')) {
    th.classList.toggle('sorted-asc', th.dataset.sort === activityView.sort && activityView.order === 'asc');
    th.classList.toggle('sorted-desc', th.dataset.sort === activityView.sort && activityView.order === 'desc');
  }
}

function histogramCard(label, h) {
  const card = el('div', { class: 'card' }, el('div', { class: 'label' }, label));
  if (!h || !h.bins || h.bins.length === 0) {
    card.append(el('div', { class: 'value' }, '–'));
    return card;
  }
  card.append(el('div', { class: 'value' }, `${fixed(h.p50)} t/s`),
    el('div', { class: 'muted small' }, `p50 ${fixed(h.p50)} · p95 ${fixed(h.p95)} · p99 ${fixed(h.p99)}`));
  const peak = Math.max(...h.bins, 1);
  const bars = el('div', { class: 'hist', title: `${fixed(h.min)} to ${fixed(h.max)} t/s` });
  for (const n of h.bins) {
    const bar = el('div');
    bar.style.height = `${Math.max(2, (100 * n) / peak)}%`;
    bars.append(bar);
  }
  card.append(bars);
  return card;
}

function renderStats(s) {
  const number = (label, value) => el('div', { class: 'card' },
    el('div', { class: 'label' }, label), el('div', { class: 'value' }, (value || 0).toLocaleString()));
  $('#stats').replaceChildren(
    number('Requests', s.total_requests),
    number('Prompt tokens', s.total_input_tokens),
    number('Generated tokens', s.total_output_tokens),
    number('Cached tokens', s.total_cache_tokens),
    histogramCard('Prefill speed', s.prompt_histogram),
    histogramCard('Decode speed', s.gen_histogram));
}

// Counted here from the request's start, so that the column moves between the server's updates.
function elapsedMs(r) {
  const started = Date.parse(r.timestamp);
  return Number.isNaN(started) ? r.elapsed_ms || 0 : Math.max(r.elapsed_ms || 0, Date.now() - started);
}

function renderInflight() {
  const body = $('#inflight-table tbody');
  const requests = [...state.inflight.values()];
  body.replaceChildren(...requests.map((r) => el('tr', { 'data-id': r.id },
    el('td', { class: 'num' }, String(r.id)),
    el('td', {}, r.model || ''),
    el('td', {}, `${r.method || ''} ${r.req_path || ''}`),
    el('td', {}, r.remote_ip || ''),
    el('td', { class: 'num' }, seconds(elapsedMs(r))),
    el('td', { class: 'num' }, bytes(r.resp_bytes || 0)),
    el('td', {}, el('button', { type: 'button', onclick: () => cancelRequest(r.id) }, 'Cancel')))));
  if (requests.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 7 }, 'nothing in flight')));
}

async function cancelRequest(id) {
  try {
    await api(`/api/inflight/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  } catch (error) {
    toast(`cancel ${id}: ${error.message}`);
  }
}

// ---------------------------------------------------------------- logs

// Turns one line's ANSI colour codes (SGR) into spans; everything else is text.
function ansiLine(text) {
  const line = el('div');
  let classes = [];
  let rest = text;
  const sgr = /\x1b\[([0-9;]*)m/g;
  let at = 0;
  let match;
  const push = (part) => {
    if (part === '') return;
    line.append(classes.length ? el('span', { class: classes.join(' ') }, part) : document.createTextNode(part));
  };
  while ((match = sgr.exec(rest)) !== null) {
    push(rest.slice(at, match.index));
    at = sgr.lastIndex;
    for (const code of (match[1] || '0').split(';').map(Number)) {
      if (code === 0) classes = [];
      else if (code === 1) classes.push('ansi-bold');
      else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) {
        classes = classes.filter((c) => !/^ansi-\d/.test(c));
        classes.push(`ansi-${code >= 90 ? code - 60 : code}`);
      } else if (code === 39) classes = classes.filter((c) => !/^ansi-\d/.test(c));
    }
  }
  push(rest.slice(at));
  return line;
}

function renderLogs() {
  const box = $('#log');
  const source = $('#log-source').value;
  const model = $('#log-model').value;
  const filter = $('#log-filter').value.toLowerCase();
  const lines = state.logs.filter((l) => (!source || l.source === source) &&
    (!model || l.model === model) && (!filter || l.text.toLowerCase().includes(filter)));
  box.replaceChildren(...lines.slice(-2000).map((l) => ansiLine(l.text)));
  if ($('#log-follow').checked) box.scrollTop = box.scrollHeight;
}

// ---------------------------------------------------------------- playground

const chat = { messages: [], controller: null };

function chatBubble(role, text) {
  const bubble = el('div', { class: `message ${role}` }, el('div', { class: 'who' }, role),
    el('div', { class: 'reasoning' }), el('div', { class: 'content' }, text || ''), el('div', { class: 'meta' }));
  $('#chat-transcript').append(bubble);
  return bubble;
}

// Reads an OpenAI stream (SSE) and calls onChunk with each parsed `data:` object.
async function readStream(res, onChunk) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return;
      try { onChunk(JSON.parse(data)); } catch { /* not JSON: skip */ }
    }
  }
}

async function sendChat(text) {
  const model = $('#chat-model').value;
  if (!model || chat.controller) return;
  chat.messages.push({ role: 'user', content: text });
  chatBubble('user', text);
  const bubble = chatBubble('assistant', '');
  bubble.querySelector('.who').textContent = model;
  const content = bubble.querySelector('.content');
  const reasoning = bubble.querySelector('.reasoning');
  const meta = bubble.querySelector('.meta');
  const system = $('#chat-system').value.trim();
  const messages = system ? [{ role: 'system', content: system }, ...chat.messages] : chat.messages;
  chat.controller = new AbortController();
  $('#chat-stop').disabled = false;
  $('#chat-send').disabled = true;
  $('#chat-status').textContent = 'waiting for the model';
  const started = performance.now();
  let firstToken = 0;
  let timings = null;
  try {
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, messages, stream: true }),
      signal: chat.controller.signal,
    });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw new Error(body.error ? body.error.message : `${res.status} ${res.statusText}`);
    }
    await readStream(res, (chunk) => {
      if (chunk.error) throw new Error(chunk.error.message || JSON.stringify(chunk.error));
      if (chunk.timings) timings = chunk.timings;
      const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
      if (!delta) return;
      if (delta.reasoning_content) reasoning.textContent += delta.reasoning_content;
      if (delta.content) {
        if (!firstToken) firstToken = performance.now();
        content.textContent += delta.content;
        $('#chat-status').textContent = 'streaming';
      }
    });
    chat.messages.push({ role: 'assistant', content: content.textContent });
    const parts = [];
    if (firstToken) parts.push(`first token after ${seconds(firstToken - started)}`);
    if (timings && timings.predicted_per_second) parts.push(`${timings.predicted_per_second.toFixed(1)} t/s`);
    if (timings && timings.predicted_n) parts.push(`${timings.predicted_n} tokens`);
    meta.textContent = parts.join(' · ');
  } catch (error) {
    bubble.classList.add('error');
    meta.textContent = error.name === 'AbortError' ? 'stopped' : error.message;
    chat.messages.pop();  // the question goes again with the next message
  } finally {
    chat.controller = null;
    $('#chat-stop').disabled = true;
    $('#chat-send').disabled = false;
    $('#chat-status').textContent = '';
  }
}

// ---------------------------------------------------------------- groups

async function loadGroups() {
  try {
    state.groups = (await api('/api/groups')).groups;
    renderGroups();
  } catch (error) {
    toast(`GET /api/groups: ${error.message}`);
  }
}

function renderGroups() {
  const live = new Map(state.models.map((m) => [m.id, m.state]));
  $('#groups').replaceChildren(...state.groups.map((g) => {
    const flags = [g.swap ? 'swap: one member at a time' : 'swap: false (members run together)',
      g.exclusive ? 'exclusive' : 'not exclusive', g.persistent ? 'persistent' : null].filter(Boolean);
    return el('div', { class: 'card', 'data-group': g.id },
      el('div', { class: 'model-name' }, g.id),
      el('div', { class: 'flags' }, flags.join(' · ')),
      el('ul', {}, g.members.map((member) => {
        const s = live.get(member.id) || member.state;
        return el('li', { 'data-model': member.id }, el('span', { class: `state ${s}` }, `${member.id}: ${s}`));
      })));
  }));
  if (state.groups.length === 0) $('#groups').append(el('p', { class: 'muted' }, 'no groups in the config'));
  if (state.page === 'groups') loadPlan();
}

const loadPlan = throttle(async () => {
  const model = $('#plan-model').value;
  const box = $('#plan');
  if (!model) return box.replaceChildren('no models');
  try {
    const plan = await api(`/api/plan?model=${encodeURIComponent(model)}`);
    const items = plan.evict.map((e) => el('li', {}, el('b', {}, e.model), ` stops: ${e.reason}`));
    let summary;
    if (plan.refused) summary = `would be refused: ${plan.refused}`;
    else if (plan.state === 'ready' && items.length === 0) summary = 'is served at once: the model is ready';
    else if (items.length === 0) summary = 'starts the model; nothing else has to stop';
    else summary = 'starts the model after these stop:';
    box.replaceChildren(el('div', {}, `A request for `, el('b', {}, model), ` ${summary}`),
      items.length ? el('ul', {}, items) : '');
  } catch (error) {
    box.replaceChildren(el('span', { class: 'error-text' }, error.message));
  }
}, 300);

// ---------------------------------------------------------------- pages

function showPage() {
  const page = (location.hash.replace(/^#\//, '') || 'models').split('/')[0];
  state.page = $(`#page-${page}`) ? page : 'models';
  for (const section of document.querySelectorAll('.page')) section.hidden = section.id !== `page-${state.page}`;
  for (const link of document.querySelectorAll('nav a')) link.classList.toggle('active', link.dataset.page === state.page);
  if (state.page === 'activity') loadActivity();
  if (state.page === 'logs') renderLogs();
  if (state.page === 'groups') loadGroups();
  if (state.page === 'models') loadDetails();
}

function wire() {
  $('#unload-all').addEventListener('click', async () => {
    try { await api('/api/models/unload', { method: 'POST' }); } catch (error) { toast(error.message); }
  });
  $('#activity-model').addEventListener('change', () => { activityView.page = 1; loadActivity(); });
  $('#activity-prev').addEventListener('click', () => { activityView.page--; loadActivity(); });
  $('#activity-next').addEventListener('click', () => { activityView.page++; loadActivity(); });
  for (const th of document.querySelectorAll('#activity-table th[data-sort]')) {
    th.addEventListener('click', () => {
      const key = th.dataset.sort;
      activityView.order = activityView.sort === key && activityView.order === 'desc' ? 'asc' : 'desc';
      activityView.sort = key;
      activityView.page = 1;
      loadActivity();
    });
  }
  for (const id of ['#log-source', '#log-model', '#log-filter']) $(id).addEventListener('input', renderLogs);
  $('#log-clear').addEventListener('click', () => { state.logs = []; renderLogs(); });
  $('#chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = $('#chat-input').value.trim();
    if (!text) return;
    $('#chat-input').value = '';
    sendChat(text);
  });
  $('#chat-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      $('#chat-form').requestSubmit();
    }
  });
  $('#chat-stop').addEventListener('click', () => chat.controller && chat.controller.abort());
  $('#chat-reset').addEventListener('click', () => { chat.messages = []; $('#chat-transcript').replaceChildren(); });
  $('#plan-model').addEventListener('change', loadPlan);
  window.addEventListener('hashchange', showPage);
  // The counters and memory of /api/models change without an event: look again while watched.
  setInterval(() => { if (state.page === 'models') loadDetails(); }, 5000);
  setInterval(() => { if (state.page === 'activity' && state.inflight.size) renderInflight(); }, 1000);
}

wire();
connectEvents();
showPage();
