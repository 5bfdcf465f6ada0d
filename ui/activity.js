// Activity page: totals and speed histograms (/api/metrics/stats), the request history
// (/api/metrics/activity: sortable, paged, by model; a row's capture in a dialog) and the requests
// in flight (inflight events).
import { $, el, state, api, toast, bytes, fixed, seconds } from './core.js';
import { openCapture, wireCapture } from './capture.js';

const activityView = { page: 1, sort: 'id', order: 'desc', totalPages: 1 };

export async function loadActivity() {
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
    el('td', { class: 'num' }, seconds(r.duration_ms)),
    el('td', {}, r.has_capture
      ? el('button', { type: 'button', class: 'capture', onclick: () => openCapture(r.id) }, 'capture')
      : ''))));
  if (rows.data.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 12 }, 'no requests yet')));
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

// The request's session, from the first header of ui.activity.session_id (uiConfig) it has.
function sessionOf(r) {
  const headers = r.req_headers || {};
  const byName = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const name of state.sessionHeaders) {
    const value = byName.get(name.toLowerCase());
    if (value) return value;
  }
  return '';
}

export function renderInflight() {
  const body = $('#inflight-table tbody');
  const requests = [...state.inflight.values()];
  body.replaceChildren(...requests.map((r) => el('tr', { 'data-id': r.id },
    el('td', { class: 'num' }, String(r.id)),
    el('td', {}, r.model || ''),
    el('td', {}, `${r.method || ''} ${r.req_path || ''}`),
    el('td', {}, r.remote_ip || ''),
    el('td', {}, sessionOf(r)),
    el('td', { class: 'num' }, seconds(elapsedMs(r))),
    el('td', { class: 'num' }, bytes(r.resp_bytes || 0)),
    el('td', {}, el('button', { type: 'button', onclick: () => cancelRequest(r.id) }, 'Cancel')))));
  if (requests.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: 8 }, 'nothing in flight')));
}

async function cancelRequest(id) {
  try {
    await api(`/api/inflight/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  } catch (error) {
    toast(`cancel ${id}: ${error.message}`);
  }
}

export function wireActivity() {
  wireCapture();
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
  setInterval(() => { if (state.page === 'activity' && state.inflight.size) renderInflight(); }, 1000);
}
