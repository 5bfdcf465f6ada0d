// Models page: every local model's state (live from modelStatus and loading events), measured
// memory and counters (/api/models), load and unload.
import { $, el, state, api, toast, bytes, fixed, fillSelect } from './core.js';

export async function loadDetails() {
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
    // The stage the backend's output shows (metadata, tensors, context, warmup), when it shows one.
    const stage = progress && progress.stage && progress.stage !== 'starting' ? `${progress.stage}, ` : '';
    if (known && typeof progress.eta_seconds === 'number') {
      cell.append(el('div', { class: 'muted small' }, `${stage}about ${Math.ceil(progress.eta_seconds)} s left`));
    } else if (stage) {
      cell.append(el('div', { class: 'muted small' }, stage.slice(0, -2)));
    }
  }
  if (failed && (model.last_error || detail.last_error)) {
    cell.append(el('div', { class: 'error-text' }, model.last_error || detail.last_error));
  }
  return cell;
}

export function renderModels() {
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
export function renderModelLists() {
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

export function wireModels() {
  $('#unload-all').addEventListener('click', async () => {
    try { await api('/api/models/unload', { method: 'POST' }); } catch (error) { toast(error.message); }
  });
  // The counters and memory of /api/models change without an event: look again while watched.
  setInterval(() => { if (state.page === 'models') loadDetails(); }, 5000);
}
