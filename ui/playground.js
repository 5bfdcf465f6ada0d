// Playground page: a streaming chat with any model; the loading state swapd streams as
// reasoning_content shows above the answer.
import { $, el, seconds } from './core.js';

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

export function wirePlayground() {
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
}
