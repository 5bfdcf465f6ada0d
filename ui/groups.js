// Groups page: the groups and their members (/api/groups), and what a request for a model would
// stop and why (/api/plan, answered by the scheduler itself).
import { $, el, state, api, toast, throttle } from './core.js';

export async function loadGroups() {
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

export function wireGroups() {
  $('#plan-model').addEventListener('change', loadPlan);
}
