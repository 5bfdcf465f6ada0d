// Scoreboard page: `swapd bench`'s results (/api/bench), the newest run of each model alone, in
// each duo, and of each swap (cold and warm). Bench runs write the store from their own process and send no event: the page
// reads it when shown and on Refresh.
import { $, el, api, toast, fixed, seconds } from './core.js';

function gatesCell(row) {
  const gates = row.gates || [];
  if (gates.length === 0) return el('td', { class: 'muted' }, '–');
  const failed = gates.filter((g) => !g.passed);
  // Every gate on hover: the failures with their reasons and where the output was saved.
  const title = gates.map((g) => (g.passed ? `${g.gate}: pass`
    : `${g.gate}: FAIL: ${g.reason}${g.output_path ? ` (output: ${g.output_path})` : ''}`)).join('\n');
  const text = failed.length === 0 ? `pass ${gates.length}/${gates.length}` : `fail ${failed.length}/${gates.length}`;
  return el('td', { class: failed.length ? 'gates fail' : 'gates pass', title }, text);
}

function modelCell(row) {
  const cell = el('td', { title: row.machine || '' }, el('span', { class: 'model-name' }, row.model));
  if (row.error) cell.append(el('div', { class: 'error-text' }, row.error));
  return cell;
}

// A swap's row says what it replaced and where its files were, with what the swap read from disk.
function modeCell(row) {
  if (row.mode === 'duo') return el('td', {}, `duo with ${row.partner}`);
  if (row.mode !== 'swap') return el('td', {}, row.mode);
  const mib = row.disk_read_bytes >= 0 ? `read ${(row.disk_read_bytes / 1048576).toFixed(1)} MiB` : '';
  const cached = row.page_cache_before >= 0 ? `${Math.round(row.page_cache_before * 100)}% cached before` : '';
  const via = row.via ? `, via ${row.via}` : '';
  return el('td', { class: 'swap', title: row.detail || '' }, `swap after ${row.partner}, ${row.cache}${via}`,
    el('div', { class: 'muted' }, [mib, cached].filter(Boolean).join(', ')));
}

function renderScoreboard(body) {
  const rows = body.rows || [];
  const tbody = $('#scoreboard-table tbody');
  tbody.replaceChildren(...rows.map((r) => el('tr', { 'data-id': r.id, 'data-model': r.model, 'data-mode': r.mode, class: r.error ? 'failed' : null },
    modelCell(r),
    modeCell(r),
    el('td', { class: 'num', title: r.tps_source ? `from ${r.tps_source}` : '' }, fixed(r.decode_tps)),
    el('td', { class: 'num' }, fixed(r.prefill_tps)),
    el('td', { class: 'num' }, r.ttft_ms >= 0 ? seconds(r.ttft_ms) : ''),
    el('td', { class: 'num' }, r.load_seconds >= 0 ? r.load_seconds.toFixed(1) : ''),
    gatesCell(r),
    el('td', { class: r.noisy ? 'noisy' : '', title: r.noise || '' }, r.noisy ? 'noisy' : ''),
    el('td', { title: r.machine || '' }, r.finished_at ? new Date(r.finished_at * 1000).toLocaleString() : ''))));
  if (rows.length === 0) {
    const why = body.error ? ` (${body.error})` : '';
    tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: 9 },
      'No benchmark results yet: run ', el('code', {}, 'swapd bench'), ` to fill the scoreboard${why}.`)));
  }
}

export async function loadScoreboard() {
  try {
    renderScoreboard(await api('/api/bench'));
  } catch (error) {
    toast(`GET /api/bench: ${error.message}`);
  }
}

export function wireScoreboard() {
  $('#scoreboard-refresh').addEventListener('click', loadScoreboard);
}
