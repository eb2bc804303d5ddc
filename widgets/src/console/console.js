// The operator console: one page over the gateway's /console/api. Vanilla
// JS, no dependencies; every value goes into the DOM as text (the charts are
// SVG the gateway draws and escapes). Status and usage refresh every few
// seconds while their view is open.
'use strict';

const REFRESH_MS = 4000;
const state = { csrf: null, view: null, timer: null, server: null, project: null, projects: [], request: null };

const $ = (id) => document.getElementById(id);

/** An element with attributes (`on*` are listeners) and children (strings become text). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** The gateway draws the charts; its SVG is escaped there. */
function svg(markup) {
  const box = h('div', { class: 'chart-box' });
  box.innerHTML = markup;
  return box;
}

class SignedOut extends Error {}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
  const res = await fetch(`/console/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return null;
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) throw new SignedOut(data.error?.message || 'signed out');
  if (!res.ok) throw new Error(data.error?.message || `HTTP ${res.status}`);
  return data;
}

function flash(text, bad = false) {
  const el = $('flash');
  el.textContent = text;
  el.className = bad ? 'flash bad' : 'flash';
  el.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => (el.hidden = true), 5000);
}

/** Runs an action; errors become a message, a lost session the sign-in form. */
async function act(fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof SignedOut) return showSignIn(e.message);
    flash(e.message, true);
  }
}

function showSignIn(message = '') {
  clearInterval(state.timer);
  state.csrf = null;
  $('nav').hidden = true;
  $('view').replaceChildren();
  $('sign-in').hidden = false;
  $('sign-in-error').textContent = message && message !== 'signed out' ? message : '';
  $('token').focus();
}

/** A table in a box that scrolls sideways; each cell knows its column's name (`data-label`), for tables that reflow on a phone. */
function table(head, rows, attrs = {}) {
  for (const tr of rows) [...tr.children].forEach((td, i) => head[i] && td.setAttribute('data-label', head[i]));
  return h('div', { class: 'scroll' }, h('table', attrs, h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, c)))), h('tbody', {}, rows)));
}

const badge = (status) => h('span', { class: `badge s-${status}` }, status);
const when = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : 'never');
const pct = (n, of) => (of ? `${((100 * n) / of).toFixed(1)}%` : '–');

// ---- Servers -------------------------------------------------------------

async function servers() {
  const data = await api('GET', '/overview');
  state.projects = data.projects.map((p) => p.name);
  const rows = data.servers.map((s) =>
    h('tr', { 'data-server': s.name, 'data-status': s.status, class: state.server === s.name ? 'picked' : null },
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => openServer(s.name) }, s.name)),
      h('td', {}, badge(s.status), s.idle ? h('small', {}, ' idle') : null, s.lazy ? h('small', {}, ' lazy') : null),
      h('td', {}, s.transport),
      h('td', {}, s.protocol || '–'),
      h('td', { class: 'num' }, s.tools, s.held ? h('small', {}, ` (${s.held} held)`) : null),
      h('td', { class: 'num' }, s.restarts),
      h('td', { class: 'last-error' }, s.lastError ? [h('span', {}, s.lastError.message), h('small', {}, ` ${when(s.lastError.at)}`)] : '–')));
  const search = h('p', { class: 'muted' }, `Search in force: ${data.search.inForce} (${data.search.detail}). Audit: ${data.audit}.`);
  // A call whose server was called and whose outcome never came: running now, or cut off by a stopped gateway.
  const started = data.startedCalls.length
    ? table(['Started', 'Request', 'Project', 'Tool'], data.startedCalls.map((c) => h('tr', { 'data-request': c.requestId }, h('td', {}, when(c.at)), h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => act(() => openRequest(requestOf(c.requestId))) }, c.requestId)), h('td', { class: 'num' }, c.projectId ?? '–'), h('td', {}, c.toolKey || '–'))), { id: 'started-calls' })
    : h('p', { class: 'muted' }, 'None.');
  const actions = data.actions.length
    ? table(['When', 'Who', 'What', 'On'], data.actions.map((a) => h('tr', {}, h('td', {}, when(a.at)), h('td', {}, a.actor), h('td', {}, a.action), h('td', {}, a.target, a.detail ? ` (${a.detail})` : ''))))
    : h('p', { class: 'muted' }, 'No operator actions yet.');
  const view = [
    h('h2', {}, 'Servers'),
    search,
    table(['Server', 'Status', 'Transport', 'Protocol', 'Tools', 'Restarts', 'Last error'], rows, { id: 'servers-table' }),
    h('div', { id: 'server-detail' }),
    h('h2', {}, 'Recent operator actions'),
    actions,
    h('h2', {}, 'Calls started, with no outcome'),
    h('p', { class: 'muted' }, 'Running now, or cut off when a gateway stopped during them (mcp-gateway audit shows them as started).'),
    started,
    h('h2', {}, 'Look up a request'),
    requestLookup(),
  ];
  // The open panels (and an id being typed) outlive the refresh.
  const detail = $('server-detail');
  const request = $('request-detail');
  $('view').replaceChildren(...view);
  if (detail && state.server) $('server-detail').replaceWith(detail);
  if (request) $('request-detail').replaceWith(request);
}

// ---- Requests ------------------------------------------------------------

/** The request a row belongs to: a script's inner call `ID.N` is part of `ID`. */
const requestOf = (id) => id.replace(/\.\d+$/, '');

function requestLookup() {
  const input = h('input', { id: 'request-id', placeholder: 'a request id, from a log line or mcp-gateway audit tail', 'aria-label': 'request id', value: state.request || '' });
  const form = h('form', { id: 'request-form', class: 'actions', onsubmit: (e) => {
    e.preventDefault();
    const id = input.value.trim();
    if (id) act(() => openRequest(id));
  } }, input, h('button', { type: 'submit' }, 'Look up'));
  return h('section', { class: 'card', id: 'request-detail' }, form, h('div', { id: 'request-rows-box' }));
}

/** What one request did: a call, a discovery, or a script with its calls in the order it made them. */
async function openRequest(id) {
  state.request = id;
  $('request-id').value = id;
  const data = await api('GET', `/requests/${encodeURIComponent(id)}`);
  const own = data.rows.find((r) => r.requestId === id);
  const calls = data.rows.filter((r) => r !== own);
  const summary = !own
    ? `A script with no row of its own yet: still running, or cut off when a gateway stopped. ${calls.length} call(s) so far.`
    : own.metaTool === 'tool_execute' && !own.toolKey
      ? `A script (code mode): ${own.outcome}, ${calls.length} call(s), ${own.latencyMs} ms.`
      : `${own.metaTool}${own.toolKey ? ` of ${own.toolKey}` : ''}: ${own.outcome}, ${own.latencyMs} ms.`;
  const rows = data.rows.map((r) =>
    h('tr', { 'data-request': r.requestId, 'data-outcome': r.outcome, class: r === own ? null : 'inner' },
      h('td', {}, r === own ? r.requestId : `↳ ${r.requestId}`), h('td', {}, when(r.at)), h('td', { class: 'num' }, r.projectId ?? '–'),
      h('td', {}, r.toolKey || (r === own && r.metaTool === 'tool_execute' ? 'script' : r.metaTool)),
      h('td', {}, r.outcome), h('td', { class: 'num' }, r.latencyMs), h('td', { class: 'num' }, r.resultCount ?? '–')));
  $('request-rows-box').replaceChildren(
    h('p', { id: 'request-summary' }, summary),
    table(['Request', 'At', 'Project', 'Tool', 'Outcome', 'ms', 'Results'], rows, { id: 'request-rows', 'data-request': id }));
}

/** A project that sees a tool, with the name (and description) its overrides give it there. */
function seenBy(project, as) {
  if (!as) return h('div', {}, project);
  return h('div', { title: as.description || '' }, project, ' ', h('span', { class: 'muted' }, `as ${as.key}`));
}

async function openServer(name) {
  state.server = name;
  const data = await act(() => api('GET', `/servers/${encodeURIComponent(name)}`));
  if (!data) return;
  const s = data.server;
  const tools = data.tools.map((t) =>
    h('tr', { 'data-tool': t.key, 'data-state': t.state },
      h('td', {}, h('strong', {}, t.name), t.title ? h('div', { class: 'muted' }, t.title) : null),
      h('td', {}, h('div', { class: 'clip' }, t.description || ''), h('details', {}, h('summary', {}, 'input schema'), h('pre', {}, JSON.stringify(t.inputSchema, null, 2)))),
      h('td', {}, badge(t.state), t.why ? h('div', { class: 'muted' }, t.why) : null),
      h('td', {}, t.tags.length ? t.tags.map((g) => h('span', { class: 'tag' }, g)) : '–'),
      h('td', { class: 'projects' }, t.projects.length ? t.projects.map((p) => seenBy(p, t.seenAs[p])) : h('span', { class: 'muted' }, 'none'))));
  const panel = h('section', { class: 'card', id: 'server-detail', 'data-server': s.name },
    h('h3', {}, s.name, ' ', badge(s.status)),
    h('p', { class: 'muted' }, s.detail),
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'restart', onclick: () => serverAction(s.name, 'restart') }, 'Restart'),
      h('button', { type: 'button', id: 'relist', class: 'quiet', onclick: () => serverAction(s.name, 'relist') }, 'List tools again')),
    s.stderr.length ? [h('h4', {}, 'stderr (newest last)'), h('pre', { class: 'stderr' }, s.stderr.join('\n'))] : null,
    h('h4', {}, `Tools (${data.tools.length})`),
    table(['Tool', 'Description', 'State', 'Tags', 'Projects that see it'], tools, { id: 'tools-table' }));
  for (const tr of document.querySelectorAll('#servers-table tr[data-server]')) tr.classList.toggle('picked', tr.dataset.server === name);
  $('server-detail').replaceWith(panel);
}

async function serverAction(name, action) {
  await act(async () => {
    await api('POST', `/servers/${encodeURIComponent(name)}/${action}`);
    flash(action === 'restart' ? `Restarting ${name}` : `Listing ${name}'s tools again`);
    setTimeout(() => act(() => openServer(name)), 1500);
  });
}

// ---- Projects ------------------------------------------------------------

async function projects() {
  const data = await api('GET', '/overview');
  state.projects = data.projects.map((p) => p.name);
  if (!state.project && data.projects.length) state.project = data.projects[0].name;
  $('view').replaceChildren(
    h('h2', {}, 'Projects'),
    h('div', { id: 'projects-list' }, projectList(data)),
    h('div', { id: 'project-detail' }));
  if (state.project) await openProject(state.project);
}

/** The projects with their live-token counts, from `/overview`. */
function projectList(data) {
  const list = data.projects.map((p) =>
    h('tr', { 'data-project': p.name, 'data-live-tokens': p.liveTokens, class: p.name === state.project ? 'picked' : null },
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => openProject(p.name) }, p.name)),
      h('td', {}, p.search), h('td', {}, p.exposure), h('td', { class: 'num live-tokens' }, p.liveTokens)));
  return data.projects.length ? table(['Project', 'Search', 'Exposure', 'Live tokens'], list, { id: 'projects-table' }) : h('p', {}, 'No projects yet: mcp-gateway project create NAME');
}

/** Reads the projects list again (a token issued or revoked changes its live-token count); the open project's panel stays. */
async function refreshProjectList() {
  const data = await api('GET', '/overview');
  state.projects = data.projects.map((p) => p.name);
  $('projects-list')?.replaceChildren(projectList(data));
}

async function openProject(name) {
  state.project = name;
  const data = await act(() => api('GET', `/projects/${encodeURIComponent(name)}`));
  if (!data) return;
  const p = data.project;
  for (const tr of document.querySelectorAll('#projects-table tr[data-project]')) tr.classList.toggle('picked', tr.dataset.project === name);
  const search = h('select', { id: 'search-mode', 'aria-label': 'search' }, ['hybrid', 'bm25', 'cloud', 'off'].map((m) => h('option', { value: m, selected: m === p.search }, m)));
  const grants = data.grants.map((g) =>
    h('tr', { 'data-grant': `${g.server}:${g.tool || '*'}`, 'data-enabled': String(g.enabled) },
      h('td', {}, g.server), h('td', {}, g.tool || 'whole server'), h('td', {}, g.enabled ? 'allow' : 'deny'),
      h('td', {}, g.enabled ? h('button', { type: 'button', class: 'quiet', onclick: () => grant(name, g.server, g.tool, false) }, 'Revoke') : h('button', { type: 'button', class: 'quiet', onclick: () => grant(name, g.server, g.tool, true) }, 'Allow'))));
  const serverPick = h('select', { id: 'grant-server', 'aria-label': 'server' }, data.servers.map((s) => h('option', { value: s.name }, s.name)));
  const toolPick = h('select', { id: 'grant-tool', 'aria-label': 'tool' });
  const fillTools = () => {
    const s = data.servers.find((x) => x.name === serverPick.value);
    toolPick.replaceChildren(h('option', { value: '' }, 'whole server'), ...(s ? s.tools : []).map((t) => h('option', { value: t }, t)));
  };
  serverPick.addEventListener('change', fillTools);
  fillTools();
  const tokens = data.tokens.map((t) =>
    h('tr', { 'data-token-id': t.id, 'data-state': t.revokedAt ? 'revoked' : 'live' },
      h('td', { class: 'num' }, `#${t.id}`), h('td', {}, t.label || '–'), h('td', {}, when(t.createdAt)), h('td', {}, when(t.lastUsedAt)),
      h('td', {}, t.revokedAt ? `revoked ${when(t.revokedAt)}` : h('button', { type: 'button', class: 'danger', onclick: () => revoke(name, t.id) }, 'Revoke'))));
  const label = h('input', { id: 'token-label', placeholder: 'label (laptop, ci…)', maxlength: 64, 'aria-label': 'token label' });
  const panel = h('section', { class: 'card', id: 'project-detail', 'data-project': name },
    h('h3', {}, p.name),
    h('p', { class: 'muted' }, `id ${p.id} · exposure ${p.exposure} · created ${when(p.createdAt)} · learned ${data.learnedAssociations} term–tool associations, ${data.rememberedMeanings} remembered requests`),
    h('div', { class: 'row' }, h('label', { for: 'search-mode' }, 'Search'), search,
      h('button', { type: 'button', id: 'save-search', onclick: () => setSearch(name, search.value) }, 'Save')),
    h('h4', {}, 'Grants'),
    data.grants.length ? table(['Server', 'Tool', 'Decision', ''], grants, { id: 'grants-table' }) : h('p', { class: 'muted', id: 'grants-table' }, 'No grants: this project sees no server.'),
    h('div', { class: 'row' }, serverPick, toolPick,
      h('button', { type: 'button', id: 'grant-allow', onclick: () => grant(name, serverPick.value, toolPick.value, true) }, 'Grant'),
      h('button', { type: 'button', id: 'grant-deny', class: 'quiet', onclick: () => grant(name, serverPick.value, toolPick.value, false) }, 'Deny')),
    h('h4', {}, 'Tokens'),
    data.tokens.length ? table(['Id', 'Label', 'Created', 'Last used', ''], tokens, { id: 'tokens-table' }) : h('p', { class: 'muted', id: 'tokens-table' }, 'No tokens.'),
    h('div', { class: 'row' }, label, h('button', { type: 'button', id: 'issue-token', onclick: () => issue(name, label.value) }, 'Issue token')),
    h('div', { id: 'issued' }),
    h('h4', {}, 'Own credentials (names only)'),
    data.credentials.length
      ? h('ul', { id: 'credentials' }, data.credentials.map((c) => h('li', {}, `${c.server}: ${c.kind === 'oauth' ? 'OAuth sign-in' : `${c.kind} ${c.name}`}, set ${when(c.setAt)}`)))
      : h('p', { class: 'muted' }, 'None.'));
  $('project-detail').replaceWith(panel);
}

async function grant(project, server, tool, allow) {
  await act(async () => {
    await api('POST', `/projects/${encodeURIComponent(project)}/grants`, { server, tool: tool || null, allow });
    flash(`${allow ? 'Granted' : 'Revoked'} ${tool ? `${server}:${tool}` : server} ${allow ? 'to' : 'from'} ${project}`);
    await openProject(project);
  });
}

async function setSearch(project, search) {
  await act(async () => {
    await api('POST', `/projects/${encodeURIComponent(project)}/search`, { search });
    flash(`${project} now searches with ${search}`);
    await projects();
  });
}

async function issue(project, label) {
  await act(async () => {
    const t = await api('POST', `/projects/${encodeURIComponent(project)}/tokens`, { label });
    await openProject(project);
    const secret = h('code', { id: 'token-secret' }, t.token);
    $('issued').replaceChildren(h('div', { class: 'card secret' },
      h('p', {}, h('strong', {}, `Token #${t.id}`), ' is shown only now. Store it safely:'), secret,
      h('button', { type: 'button', class: 'quiet', onclick: () => navigator.clipboard?.writeText(t.token).then(() => flash('Copied')) }, 'Copy')));
    // The secret first: the projects list's live-token count after it.
    await refreshProjectList();
  });
}

async function revoke(project, id) {
  await act(async () => {
    await api('POST', `/tokens/${id}/revoke`);
    flash(`Token #${id} revoked`);
    await openProject(project);
    await refreshProjectList();
  });
}

// ---- Usage ---------------------------------------------------------------

function usageControls() {
  const range = h('select', { id: 'usage-range', 'aria-label': 'range' }, ['hour', 'day', 'week'].map((r) => h('option', { value: r, selected: r === (state.range || 'hour') }, `last ${r}`)));
  const project = h('select', { id: 'usage-project', 'aria-label': 'project' }, h('option', { value: '' }, 'all projects'), state.projects.map((p) => h('option', { value: p, selected: p === state.usageProject }, p)));
  const changed = () => {
    state.range = range.value;
    state.usageProject = project.value;
    act(usageData);
  };
  range.addEventListener('change', changed);
  project.addEventListener('change', changed);
  return h('div', { class: 'row' }, range, project, h('span', { id: 'usage-tool' }));
}

/** Narrows usage to one tool (`''`: every tool). */
function pickTool(key) {
  state.usageTool = key;
  act(usageData);
}

async function usage() {
  if (!state.projects.length) state.projects = (await api('GET', '/overview')).projects.map((p) => p.name);
  $('view').replaceChildren(h('h2', {}, 'Usage'), usageControls(), h('div', { id: 'usage-data' }));
  await usageData();
}

async function usageData() {
  const q = new URLSearchParams({ range: state.range || 'hour' });
  if (state.usageProject) q.set('project', state.usageProject);
  if (state.usageTool) q.set('tool', state.usageTool);
  const u = await api('GET', `/usage?${q}`);
  $('usage-tool').replaceChildren(...(state.usageTool
    ? [h('span', { class: 'tag' }, `tool ${state.usageTool}`), h('button', { type: 'button', class: 'quiet', onclick: () => pickTool('') }, 'all tools')]
    : [h('small', {}, 'pick a tool below to see it alone')]));
  const toolRows = u.tools.map((t) =>
    h('tr', { 'data-tool': t.name, 'data-calls': t.calls },
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => pickTool(t.name) }, t.name)), h('td', { class: 'num' }, t.calls), h('td', { class: 'num' }, pct(t.errors, t.calls)), h('td', { class: 'num' }, pct(t.timeouts, t.calls)),
      h('td', { class: 'num' }, `${t.p50Ms} ms`), h('td', { class: 'num' }, `${t.p95Ms} ms`)));
  const projectRows = u.projects.map((p) =>
    h('tr', { 'data-project': p.name, 'data-saved': p.savedTokens, 'data-kept': p.keptBytes },
      h('td', {}, p.name), h('td', { class: 'num' }, p.calls), h('td', { class: 'num' }, pct(p.errors, p.calls)), h('td', { class: 'num' }, pct(p.timeouts, p.calls)),
      h('td', { class: 'num' }, `${p.p50Ms} ms`), h('td', { class: 'num' }, `${p.p95Ms} ms`),
      h('td', { class: 'num' }, p.savedTokens), h('td', { class: 'num' }, p.keptBytes)));
  const head = ['Name', 'Calls', 'Errors', 'Timeouts', 'p50', 'p95'];
  $('usage-data').replaceChildren(
    h('p', { class: 'totals', id: 'usage-totals', 'data-calls': u.calls, 'data-errors': u.errors }, `${u.calls} calls, ${u.errors} not ok (${pct(u.errors, u.calls)}) since ${when(u.since)}`),
    h('div', { class: 'card', id: 'calls-chart' }, h('h3', {}, 'Calls over time'), svg(u.charts.calls)),
    h('div', { class: 'card', id: 'saved-chart', 'data-saved': u.savedTokens, 'data-kept': u.keptBytes },
      h('h3', {}, 'Kept out of models\' context'),
      h('p', { class: 'muted' }, `${u.savedTokens} tokens saved by discovery (o200k), ${u.keptBytes} bytes of tool results kept by code mode`),
      svg(u.charts.saved)),
    h('div', { class: 'two' },
      h('div', { class: 'card', id: 'top-tools' }, h('h3', {}, 'Top tools'), svg(u.charts.tools)),
      h('div', { class: 'card', id: 'top-failing' }, h('h3', {}, 'Top failing tools'), svg(u.charts.failing))),
    h('h3', {}, 'Per tool (tool_execute)'),
    u.tools.length ? table(head, toolRows, { id: 'usage-tools' }) : h('p', { class: 'muted' }, 'No tool calls in this range.'),
    h('h3', {}, 'Per project (all meta-tool calls)'),
    u.projects.length ? table([...head, 'Tokens saved', 'Bytes kept'], projectRows, { id: 'usage-projects' }) : h('p', { class: 'muted' }, 'No calls in this range.'));
}

// ---- Playground ----------------------------------------------------------

async function playground() {
  if (!state.projects.length) state.projects = (await api('GET', '/overview')).projects.map((p) => p.name);
  const project = h('select', { id: 'play-project', 'aria-label': 'project' }, state.projects.map((p) => h('option', { value: p, selected: p === state.project }, p)));
  const queries = h('textarea', { id: 'play-query', rows: 3, placeholder: 'One query per line: each line is one step of the task', 'aria-label': 'queries' });
  const max = h('input', { id: 'play-max', type: 'number', min: 1, max: 50, value: 10, 'aria-label': 'max results' });
  const run = async (e) => {
    e.preventDefault();
    const steps = queries.value.split('\n').map((q) => q.trim()).filter(Boolean);
    if (!steps.length) return flash('Type a query', true);
    state.project = project.value;
    await act(async () => {
      const r = await api('POST', '/search', { project: project.value, arguments: { query: steps.length === 1 ? steps[0] : steps, maxResults: Number(max.value) || 10 } });
      showResults(r);
    });
  };
  $('view').replaceChildren(
    h('h2', {}, 'Search playground'),
    h('p', { class: 'muted' }, 'What tool_discovery answers the project, from the same code; matches it cannot see are listed apart, for operators only.'),
    h('form', { class: 'card', id: 'play-form', onsubmit: run },
      h('div', { class: 'row' }, h('label', { for: 'play-project' }, 'Project'), project, h('label', { for: 'play-max' }, 'Results'), max),
      queries,
      h('button', { type: 'submit', id: 'play-run' }, 'Search')),
    h('div', { id: 'play-results' }));
}

function showResults(r) {
  const a = r.answer;
  const item = (f, i, hidden) =>
    h('li', { class: hidden ? 'result hidden-result' : 'result', 'data-key': f.toolKey, 'data-relevance': f.relevance },
      h('div', { class: 'row' }, h('span', { class: 'rank' }, `${i + 1}`), h('strong', {}, f.toolKey), h('span', { class: 'score' }, f.relevance.toFixed(3)), hidden ? h('span', { class: 'badge s-hidden' }, 'hidden') : null, r.answer && f.query ? h('small', {}, `step ${f.query + 1}`) : null),
      f.description ? h('div', { class: 'clip' }, f.description) : null,
      f.explanation ? h('div', { class: 'explanation' }, f.explanation) : null,
      hidden ? h('div', { class: 'explanation why-hidden' }, `Hidden: ${f.hidden}`) : null);
  const shown = [
    h('p', { id: 'play-provider', 'data-provider': a.provider || 'off' }, `Answered by ${a.provider || 'nothing (catalog off)'} for ${r.project}`),
    a.notice ? h('p', { class: 'notice' }, a.notice) : null,
    a.results.length ? h('ol', { class: 'results', id: 'play-list' }, a.results.map((f, i) => item(f, i, false))) : h('p', { class: 'muted', id: 'play-list' }, 'No matching tools.'),
    r.hidden.length ? [h('h3', {}, 'Matches this project cannot see'), h('ol', { class: 'results', id: 'play-hidden' }, r.hidden.map((f, i) => item(f, i, true)))] : null,
  ];
  $('play-results').replaceChildren(...shown.flat().filter(Boolean));
}

// ---- Frame ---------------------------------------------------------------

const views = { servers, projects, usage, playground };
const live = new Set(['servers', 'usage']);

async function show(view) {
  if (!views[view]) view = 'servers';
  state.view = view;
  $('flash').hidden = true;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('on', a.dataset.view === view);
  clearInterval(state.timer);
  await act(() => views[view]());
  if (live.has(view)) {
    state.timer = setInterval(() => {
      if (document.hidden) return;
      act(view === 'servers' ? refreshServers : usageData);
    }, REFRESH_MS);
  }
}

/** Refreshes the servers table in place (an open server's panel stays). */
async function refreshServers() {
  const open = state.server;
  await servers();
  if (open) await openServer(open);
}

async function start() {
  try {
    const s = await api('GET', '/session');
    state.csrf = s.csrf;
    $('sign-in').hidden = true;
    $('nav').hidden = false;
    await show(location.hash.slice(1));
  } catch (e) {
    showSignIn(e instanceof SignedOut ? '' : e.message);
  }
}

$('sign-in-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  try {
    const s = await api('POST', '/session', { token: $('token').value });
    $('token').value = '';
    state.csrf = s.csrf;
    await start();
  } catch (err) {
    $('sign-in-error').textContent = err.message;
  }
});
$('sign-out').addEventListener('click', async () => {
  await api('DELETE', '/session').catch(() => {});
  showSignIn();
});
window.addEventListener('hashchange', () => state.csrf && show(location.hash.slice(1)));
start();
