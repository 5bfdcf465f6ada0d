// Logs page: swapd's and the backends' lines from logData events, by source and model.
import { $, el, state } from './core.js';


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

export function renderLogs() {
  const box = $('#log');
  const source = $('#log-source').value;
  const model = $('#log-model').value;
  const filter = $('#log-filter').value.toLowerCase();
  const lines = state.logs.filter((l) => (!source || l.source === source) &&
    (!model || l.model === model) && (!filter || l.text.toLowerCase().includes(filter)));
  box.replaceChildren(...lines.slice(-2000).map((l) => ansiLine(l.text)));
  if ($('#log-follow').checked) box.scrollTop = box.scrollHeight;
}

export function wireLogs() {
  for (const id of ['#log-source', '#log-model', '#log-filter']) $(id).addEventListener('input', renderLogs);
  $('#log-clear').addEventListener('click', () => { state.logs = []; renderLogs(); });
}
