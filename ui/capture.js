// The capture dialog of the Activity page: one request's capture (GET /api/captures/{id}), its
// request's and its answer's headers and bodies. Bodies come base64-encoded and are shown as UTF-8
// text, pretty-printed when they are JSON (an SSE answer shows as it streamed).
import { $, el, api, toast } from './core.js';

function decodeBody(base64) {
  if (base64 === null || base64 === undefined) return null;
  const raw = atob(base64);
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

function pretty(text) {
  if (text === null) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function headerLines(headers) {
  if (!headers) return null;
  return Object.keys(headers).sort().map((name) => `${name}: ${headers[name]}`).join('\n');
}

// One side of the exchange: its headers and its body (a part swapd did not keep says so).
function side(title, name, headers, body) {
  const block = (label, text, part) => [
    el('h4', {}, label),
    el('pre', { class: text === null ? 'capture-text muted' : 'capture-text', 'data-part': part },
      text === null ? 'not kept' : (text || '(empty)')),
  ];
  return el('section', { class: 'capture-side', 'data-side': name }, el('h3', {}, title),
    ...block('Headers', headerLines(headers), `${name}-headers`),
    ...block('Body', pretty(decodeBody(body)), `${name}-body`));
}

export async function openCapture(id) {
  let capture;
  try {
    capture = await api(`/api/captures/${encodeURIComponent(id)}`);
  } catch (error) {
    toast(`capture ${id}: ${error.message}`);
    return;
  }
  $('#capture-title').textContent = `Capture of request ${capture.id}: ${capture.req_path}`;
  $('#capture-body').replaceChildren(
    side('Request', 'request', capture.req_headers, capture.req_body),
    side('Response', 'response', capture.resp_headers, capture.resp_body));
  const dialog = $('#capture-dialog');
  if (!dialog.open) dialog.showModal();
}

export function wireCapture() {
  $('#capture-close').addEventListener('click', () => $('#capture-dialog').close());
}
