// The dashboard's shared parts: DOM helpers, the JSON API call, formatting, and the live state
// that the /api/events stream (app.js) keeps and every page reads.
export const $ = (selector, root = document) => root.querySelector(selector);

// Builds an element: el('td', {class: 'num'}, 'text', child, ...).
export function el(tag, attrs = {}, ...children) {
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

export const state = {
  models: [],                // modelStatus: [{id, name, description, state, aliases, ...}]
  details: new Map(),        // id -> /api/models entry (pid, memory, counters)
  loading: new Map(),        // id -> latest `loading` event
  stopping: new Map(),       // id -> why it is stopping
  inflight: new Map(),       // id -> in-flight entry
  sessionHeaders: [],        // uiConfig: the headers that name a client's session
  groups: [],
  logs: [],                  // {source, model, text}
  page: 'models',
};


export async function api(path, options = {}) {
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
export function toast(message) {
  const box = $('#toast');
  box.textContent = message;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 6000);
}

export function bytes(n) {
  if (n === undefined || n === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
export const fixed = (n, digits = 1) => (typeof n === 'number' && n > 0 ? n.toFixed(digits) : '');
export const seconds = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

// Runs `fn` at most once per `ms`, the last call winning.
export function throttle(fn, ms) {
  let timer = null;
  let last = 0;
  return () => {
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(() => { timer = null; last = Date.now(); fn(); }, wait);
  };
}

export function fillSelect(select, values, withAll) {
  const current = select.value;
  const options = values.map((v) => el('option', { value: v }, v));
  if (withAll) options.unshift(el('option', { value: '' }, 'all'));
  select.replaceChildren(...options);
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}
