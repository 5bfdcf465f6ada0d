// swapd's dashboard: one EventSource on /api/events keeps every page live; the pages (one module
// each) read swapd's own JSON API. Plain JavaScript modules, no build step, no other server.
import { $, state, throttle } from './core.js';
import { loadDetails, renderModels, renderModelLists, wireModels } from './models.js';
import { loadActivity, renderInflight, wireActivity } from './activity.js';
import { renderLogs, wireLogs } from './logs.js';
import { wirePlayground } from './playground.js';
import { loadGroups, wireGroups } from './groups.js';
import { loadScoreboard, wireScoreboard } from './scoreboard.js';

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
  uiConfig(config) {
    state.sessionHeaders = (config.activity && config.activity.session_id) || [];
  },
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

function showPage() {
  const page = (location.hash.replace(/^#\//, '') || 'models').split('/')[0];
  state.page = $(`#page-${page}`) ? page : 'models';
  for (const section of document.querySelectorAll('.page')) section.hidden = section.id !== `page-${state.page}`;
  for (const link of document.querySelectorAll('nav a')) link.classList.toggle('active', link.dataset.page === state.page);
  if (state.page === 'activity') loadActivity();
  if (state.page === 'logs') renderLogs();
  if (state.page === 'groups') loadGroups();
  if (state.page === 'scoreboard') loadScoreboard();
  // On the first load the stream's modelStatus asks for the details: not twice.
  if (state.page === 'models' && state.models.length > 0) refreshDetails();
}
wireModels();
wireActivity();
wireLogs();
wirePlayground();
wireGroups();
wireScoreboard();
window.addEventListener('hashchange', showPage);
connectEvents();
showPage();
