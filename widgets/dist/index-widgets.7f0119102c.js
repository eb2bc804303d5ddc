// @ts-check
/**
 * The Index widgets, one script for three templates; each page picks its
 * view with `<main id="root" data-view="…">`:
 * - `discover` (index-discover): `discover_filter`'s cards, with paging;
 * - `connections` (index-connections): `discover_connections`' people;
 * - `intents` (intent-display): `extract_intent`'s intents.
 *
 * Input props (the tool's structuredContent; see the book, "The Index widgets"):
 * @typedef {{ title: string, subtitle?: string, badge?: string, badges?: string[], avatar?: string, initials?: string, userId?: string }} Header
 * @typedef {{ context: string, stats: { label: string, value: number | string }[], vibecheck: string, vibecheckAvailable?: boolean }} Body
 * @typedef {{ label: string, hint: string, action: string, payload: { userId: string } }} Action
 * @typedef {{ header: Header, body: Body, actions: Action[] }} Card
 * @typedef {{ page: number, limit: number, hasNext: boolean, hasPrev: boolean }} Pagination
 * @typedef {{ hasNext: boolean, hasPrev: boolean, nextPage: number | null, prevPage: number | null, nextArguments?: object | null, prevArguments?: object | null }} PageHint
 * @typedef {{ cards: Card[], summary?: string, pagination?: Pagination, pageHint?: PageHint, generatedIntents?: object[] | null }} DiscoverProps
 * @typedef {{ id: string, payload: string, summary?: string | null }} MatchedIntent
 * @typedef {{ id: string, user: { id: string, name: string, avatar?: string | null, intro?: string | null }, synthesis: string, matchedIntents: MatchedIntent[], totalStake?: number, actions?: Action[] }} Connection
 * @typedef {{ connections: Connection[], intentsExtracted?: number, connectionsFound?: number, summary?: string }} ConnectionsProps
 * @typedef {{ id: string, payload: string, summary?: string | null, createdAt?: string }} Intent
 * @typedef {{ intents: Intent[], filesProcessed?: number, linksProcessed?: number, intentsGenerated?: number }} IntentsProps
 * @typedef {{ name: string, toolKey?: string }} CallBack
 *
 * Hosts: ChatGPT's `window.openai` (toolOutput, toolInput,
 * toolResponseMetadata, callTool, `openai:set_globals`), else the MCP Apps
 * postMessage bridge (`ui/initialize`, `ui/notifications/tool-result`,
 * `tools/call`, `ui/message`). With neither, a plain list of whatever data
 * the page carries.
 *
 * Page buttons call the tool back by the name the host listed, which may not
 * be `discover_filter`: as the latest result's `_meta["mcp-gateway/callTool"]`
 * says (`{ name }`, or `{ name: "tool_execute", toolKey }`), else by the name
 * in the MCP Apps host's `hostContext.toolInfo`, else through `tool_execute`
 * when the call came that way, else by the view's own tool name. The intent
 * display's Remove buttons call `archive_intent`, a tool for the App alone,
 * by the listed name of `extract_intent` with its own name in its place
 * (`index__extract_intent` → `index__archive_intent`); a tool for the App
 * alone never runs through `tool_execute`, so without a listed name there is
 * no Remove button.
 *
 * No storage, no analytics, no requests of its own but avatar images
 * (`https:` ones, whose origins the gateway declares in the widget's CSP, and
 * inline `data:` ones); every piece of data goes into the page as text.
 */
(function () {
  'use strict';

  const GATEWAY_TOOL = 'tool_execute';
  /** Removes one of the user's intents (the intent display's Remove buttons). */
  const ARCHIVE_TOOL = 'archive_intent';
  /** Where the gateway says how to call the tool back. */
  const CALL_BACK_META = 'mcp-gateway/callTool';
  const SAFE_LINK = /^https?:\/\//i;
  const SAFE_AVATAR = /^(https:\/\/|data:image\/)/i;
  const MARKDOWN_LINK = /\[([^\]\n]{1,300})\]\(([^)\s]{1,2000})\)/g;

  const root = /** @type {HTMLElement} */ (document.getElementById('root'));
  /** @type {any} the structuredContent shown */
  let props = null;
  /** @type {Record<string, any> | null} the arguments of the call being shown, unwrapped from tool_execute */
  let toolInput = null;
  /** @type {string | null} the key, when the call came through tool_execute */
  let inputKey = null;
  /** @type {CallBack | null} how the gateway says to call the tool back */
  let callBack = null;
  /** @type {string | null} the tool's name as the MCP Apps host listed it (hostContext.toolInfo) */
  let hostToolName = null;
  /** @type {{ callTool(name: string, args: object): Promise<any>, say(text: string): void } | null} */
  let host = null;
  let busy = false;
  /** @type {string} what went wrong with the last thing asked of the host, shown above the view */
  let notice = '';

  /** Props from a tool result, at whichever level the host put them. */
  function propsFrom(/** @type {any} */ output) {
    if (!output || typeof output !== 'object') return null;
    const content = output.structuredContent || (output.result && output.result.structuredContent) || output;
    return content && Array.isArray(content[view.list]) ? content : null;
  }

  /** The gateway's call-back name in a result's (or toolResponseMetadata's) `_meta`. */
  function callBackFrom(/** @type {any} */ meta) {
    const c = meta && typeof meta === 'object' ? meta[CALL_BACK_META] : null;
    if (!c || typeof c.name !== 'string') return null;
    return typeof c.toolKey === 'string' ? { name: c.name, toolKey: c.toolKey } : { name: c.name };
  }

  /** `el('p', { class: 'x' }, 'text', child)`; strings become text nodes, never markup. */
  function el(/** @type {string} */ tag, /** @type {Record<string, string>} */ attrs = {}, /** @type {(Node | string | null | undefined)[]} */ ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    for (const c of children) if (c != null) node.append(c);
    return node;
  }

  /** Markdown links become anchors (http/https only), everything else stays text. */
  function richText(/** @type {string} */ text) {
    const out = document.createDocumentFragment();
    const lines = String(text).split('\n');
    lines.forEach((line, i) => {
      if (i > 0) out.append(el('br'));
      let last = 0;
      for (const m of line.matchAll(MARKDOWN_LINK)) {
        out.append(line.slice(last, m.index));
        const [, label, href] = m;
        if (SAFE_LINK.test(href)) {
          out.append(el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, label));
        } else {
          out.append(label);
        }
        last = (m.index || 0) + m[0].length;
      }
      out.append(line.slice(last));
    });
    return out;
  }

  /** Up to two initials of a name. */
  function initialsOf(/** @type {string} */ name) {
    const words = String(name || '').trim().split(/\s+/).filter(Boolean);
    return words.slice(0, 2).map((w) => w[0].toUpperCase()).join('') || '?';
  }

  /** The avatar image, or the initials when there is none or it fails to load (a host's CSP may block it). */
  function avatar(/** @type {{ avatar?: string | null, initials?: string }} */ h) {
    const initials = h.initials || '?';
    const box = el('div', { class: 'avatar', 'aria-hidden': 'true' }, initials);
    // The gateway sends only https URLs from the origins it declares in the CSP, or data: images.
    const src = typeof h.avatar === 'string' ? h.avatar : '';
    if (SAFE_AVATAR.test(src)) {
      const img = el('img', { src, alt: '', referrerpolicy: 'no-referrer', decoding: 'async' });
      img.addEventListener('error', () => { box.textContent = initials; }, { once: true });
      box.textContent = '';
      box.append(img);
    }
    return box;
  }

  /** `n thing(s)`. */
  function count(/** @type {number} */ n, /** @type {string} */ noun, plural = `${noun}s`) {
    return `${n} ${n === 1 ? noun : plural}`;
  }

  /** The banner: a chip per label, then the summary. */
  function chips(/** @type {string[]} */ labels, summary = '') {
    const banner = el('div', { class: 'banner', role: 'status' });
    for (const label of labels) banner.append(el('span', { class: 'chip' }, label));
    if (summary) banner.append(el('p', { class: 'summary' }, summary));
    return banner;
  }

  function vibe(/** @type {string} */ text, /** @type {boolean} */ available) {
    const p = el('p', { class: available ? 'vibe' : 'vibe missing' });
    p.append(richText(available ? text : text || 'VibeCheck summary unavailable.'));
    return p;
  }

  /**
   * What each view shows.
   * @typedef {{ tool: string, list: string, waiting: string, nothing: string, render(p: any): Node[], plain(p: any): Node[] }} View
   */

  // --- discover_filter: cards and a pager ---
  function cardView(/** @type {Card} */ card) {
    const h = card.header || { title: 'Unknown collaborator' };
    const b = card.body || { context: '', stats: [], vibecheck: '' };
    const badges = el('div', { class: 'badges' });
    for (const badge of h.badges || (h.badge ? [h.badge] : [])) {
      badges.append(el('span', { class: /unavailable/i.test(badge) ? 'badge warn' : 'badge' }, badge));
    }
    const intents = el('ol', { class: 'intents' });
    for (const line of String(b.context || '').split('\n')) {
      const item = line.replace(/^\d+\.\s*/, '').trim();
      if (item && /^\d+\./.test(line)) intents.append(el('li', {}, item));
    }
    const stats = el('dl', { class: 'stats' });
    for (const s of b.stats || []) stats.append(el('div', {}, el('dt', {}, `${s.label}:`), el('dd', {}, String(s.value))));
    return el(
      'article',
      { class: 'card', 'data-user-id': h.userId || '' },
      el('div', { class: 'card-header' }, avatar(h), el('div', { class: 'who' }, el('h2', { class: 'name' }, h.title), badges)),
      h.subtitle ? el('p', { class: 'subtitle' }, h.subtitle) : null,
      el('h3', { class: 'section-title' }, 'What could happen here'),
      vibe(b.vibecheck || '', b.vibecheckAvailable !== false),
      intents.childElementCount ? el('h3', { class: 'section-title' }, 'Shared intents') : null,
      intents.childElementCount ? intents : null,
      stats,
      actionButtons(card.actions || [], h.title),
    );
  }

  /** A card's buttons (Connect, Save): each asks the model through the host, for the person named. */
  function actionButtons(/** @type {Action[]} */ list, /** @type {string} */ name) {
    const actions = el('div', { class: 'actions' });
    for (const a of list) {
      const button = el('button', { type: 'button', title: a.hint || '', 'data-action': a.action }, a.label);
      if (a.action === 'connect') button.classList.add('primary');
      if (!host) button.setAttribute('disabled', '');
      button.addEventListener('click', () => act(a, name));
      actions.append(button);
    }
    return actions;
  }

  function discoverBanner(/** @type {DiscoverProps} */ p) {
    const generated = Array.isArray(p.generatedIntents) ? p.generatedIntents.length : 0;
    const labels = generated ? [`${count(generated, 'intent')} generated`] : [];
    labels.push(count(p.cards.length, 'match', 'matches'));
    if (p.pagination) labels.push(`Page ${p.pagination.page}`);
    return chips(labels, p.summary);
  }

  function pager(/** @type {DiscoverProps} */ p) {
    const hint = p.pageHint || { hasNext: false, hasPrev: false, nextPage: null, prevPage: null };
    const page = p.pagination ? p.pagination.page : 1;
    const button = (/** @type {string} */ label, /** @type {string} */ dir, /** @type {boolean} */ ok, /** @type {object | null | undefined} */ args, /** @type {number} */ target) => {
      const b = el('button', { type: 'button', 'data-page': dir }, label);
      if (!ok || !host || busy) b.setAttribute('disabled', '');
      b.addEventListener('click', () => goTo(args || { ...(toolInput || {}), page: target }));
      return b;
    };
    return el(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      button('Previous page', 'prev', hint.hasPrev && page > 1, hint.prevArguments, page - 1),
      button('Next page', 'next', hint.hasNext, hint.nextArguments, page + 1),
    );
  }

  // --- discover_connections: one card per person ---
  function connectionView(/** @type {Connection} */ c) {
    const user = c.user || { id: '', name: 'Unknown collaborator' };
    const matched = Array.isArray(c.matchedIntents) ? c.matchedIntents : [];
    const intents = el('ol', { class: 'intents' });
    for (const i of matched) intents.append(el('li', {}, String(i.summary || i.payload || '')));
    return el(
      'article',
      { class: 'card connection', 'data-user-id': user.id || '' },
      el(
        'div',
        { class: 'card-header' },
        avatar({ avatar: user.avatar, initials: initialsOf(user.name) }),
        el('div', { class: 'who' }, el('h2', { class: 'name' }, user.name), el('div', { class: 'badges' }, el('span', { class: 'badge' }, count(matched.length, 'mutual intent')))),
      ),
      user.intro ? el('p', { class: 'subtitle' }, user.intro) : null,
      el('h3', { class: 'section-title' }, 'What could happen here'),
      vibe(c.synthesis || '', Boolean(c.synthesis)),
      matched.length ? el('h3', { class: 'section-title' }, 'Shared intents') : null,
      matched.length ? intents : null,
      actionButtons(Array.isArray(c.actions) ? c.actions : [], user.name),
    );
  }

  function connectionsBanner(/** @type {ConnectionsProps} */ p) {
    const labels = [count(p.connections.length, 'connection')];
    if (typeof p.intentsExtracted === 'number') labels.push(`${count(p.intentsExtracted, 'intent')} extracted`);
    return chips(labels, p.summary);
  }

  // --- extract_intent: the intents saved; the person may remove some ---
  /** @type {Set<string>} intents removed from the profile (archive_intent), and those being removed */
  const removed = new Set();
  const removing = new Set();

  /** The intents still listed. */
  function shown(/** @type {IntentsProps} */ p) {
    return p.intents.filter((i) => !removed.has(String(i.id)));
  }

  function intentView(/** @type {Intent} */ i) {
    const id = String(i.id || '');
    const date = typeof i.createdAt === 'string' ? i.createdAt.slice(0, 10) : '';
    let remove = null;
    if (host && id && siblingName(ARCHIVE_TOOL)) {
      const busyHere = removing.has(id);
      remove = el('button', { type: 'button', class: 'remove', 'data-remove': id, title: 'Remove this intent from your Index Network profile' }, busyHere ? 'Removing…' : 'Remove');
      if (busyHere) remove.setAttribute('disabled', '');
      remove.addEventListener('click', () => removeIntent(id));
    }
    return el(
      'li',
      { class: 'intent', 'data-intent-id': id },
      el('span', { class: 'intent-text' }, String(i.summary || i.payload || '')),
      date ? el('time', { datetime: String(i.createdAt) }, date) : null,
      remove,
    );
  }

  function intentsBanner(/** @type {IntentsProps} */ p) {
    const labels = [count(shown(p).length, 'intent')];
    if (removed.size) labels.push(`${removed.size} removed`);
    if (p.filesProcessed) labels.push(`${count(p.filesProcessed, 'file')} processed`);
    if (p.linksProcessed) labels.push(`${count(p.linksProcessed, 'link')} processed`);
    return chips(labels);
  }

  /** @type {Record<string, View>} */
  const views = {
    discover: {
      tool: 'discover_filter',
      list: 'cards',
      waiting: 'Waiting for discovery results…',
      nothing: 'No discovery results to show.',
      render: (/** @type {DiscoverProps} */ p) => [
        discoverBanner(p),
        p.cards.length ? el('section', { class: 'cards' }, ...p.cards.map(cardView)) : el('div', { class: 'empty' }, 'No matches found.'),
        pager(p),
      ],
      plain: (/** @type {DiscoverProps} */ p) => [
        discoverBanner(p),
        plainList(p.cards, 'No matches found.', (c) => [el('strong', {}, c.header.title), ` (${(c.header.badges || []).join(', ')}): `, richText(c.body.vibecheck || '')]),
      ],
    },
    connections: {
      tool: 'discover_connections',
      list: 'connections',
      waiting: 'Waiting for connections…',
      nothing: 'No connections to show.',
      render: (/** @type {ConnectionsProps} */ p) => [
        connectionsBanner(p),
        p.connections.length ? el('section', { class: 'cards' }, ...p.connections.map(connectionView)) : el('div', { class: 'empty' }, 'No connections found.'),
      ],
      plain: (/** @type {ConnectionsProps} */ p) => [
        connectionsBanner(p),
        plainList(p.connections, 'No connections found.', (c) => [el('strong', {}, c.user.name), ': ', richText(c.synthesis || '')]),
      ],
    },
    intents: {
      tool: 'extract_intent',
      list: 'intents',
      waiting: 'Waiting for intents…',
      nothing: 'No intents to show.',
      render: (/** @type {IntentsProps} */ p) => [
        intentsBanner(p),
        shown(p).length
          ? el('ol', { class: 'intent-list' }, ...shown(p).map(intentView))
          : el('div', { class: 'empty' }, removed.size ? 'All intents removed.' : 'No intents detected.'),
      ],
      plain: (/** @type {IntentsProps} */ p) => [intentsBanner(p), plainList(p.intents, 'No intents detected.', (i) => [String(i.summary || i.payload || '')])],
    },
  };

  /** This page's view. */
  const view = views[root.dataset.view || 'discover'] || views.discover;

  /** Without a host: a plain, readable list, no buttons. */
  function plainList(/** @type {any[]} */ items, /** @type {string} */ empty, /** @type {(item: any) => (Node | string)[]} */ line) {
    if (!items.length) return el('div', { class: 'empty' }, empty);
    return el('ol', { class: 'plain' }, ...items.map((item) => el('li', {}, ...line(item))));
  }

  function render() {
    root.replaceChildren();
    if (notice) root.append(el('p', { class: 'status', role: 'alert' }, notice));
    if (!props) {
      root.append(el('p', { class: 'status' }, host ? view.waiting : view.nothing));
      return resized();
    }
    root.append(...view.render(props));
    resized();
  }

  /** How to call the tool back: as the gateway says, else by the name the host listed, else as the call came. */
  function callBackNow() {
    if (callBack) return callBack;
    // A host that lists only tool_execute still needs the key the call came with.
    if (hostToolName && hostToolName !== GATEWAY_TOOL) return { name: hostToolName };
    return inputKey ? { name: GATEWAY_TOOL, toolKey: inputKey } : { name: view.tool };
  }

  /**
   * The name of `tool`, of this view's server, as the host listed it: this
   * view's listed name with `tool` for its own. Null when the call came
   * through tool_execute, which never runs a tool for the App alone.
   */
  function siblingName(/** @type {string} */ tool) {
    const c = callBackNow();
    if (c.toolKey || !c.name.endsWith(view.tool)) return null;
    return c.name.slice(0, c.name.length - view.tool.length) + tool;
  }

  /** The name and arguments to call the tool with `args` as the host knows it. */
  function callFor(/** @type {object} */ args) {
    const c = callBackNow();
    return c.toolKey ? { name: c.name, args: { toolKey: c.toolKey, arguments: args } } : { name: c.name, args };
  }

  /** Calls the same tool for another page, by the name the host knows it. */
  async function goTo(/** @type {object} */ args) {
    if (!host || busy) return;
    busy = true;
    notice = '';
    render();
    try {
      const call = callFor(args);
      const result = await host.callTool(call.name, call.args);
      const next = propsFrom(result);
      if (next) {
        props = next;
        toolInput = { ...args };
        callBack = callBackFrom(result && result._meta) || callBack;
      }
    } catch (e) {
      notice = `Could not load the page: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      busy = false;
      render();
    }
  }

  /** Removes intent `id` from the user's profile, then from this display; a refusal is shown, the intent kept. */
  async function removeIntent(/** @type {string} */ id) {
    const name = siblingName(ARCHIVE_TOOL);
    if (!host || !name || removing.has(id)) return;
    removing.add(id);
    notice = '';
    render();
    try {
      const result = await host.callTool(name, { intentId: id });
      if (result && result.isError) throw new Error(resultText(result) || 'the tool failed');
      removed.add(id);
    } catch (e) {
      notice = `Could not remove the intent: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      removing.delete(id);
      render();
    }
  }

  /** The text blocks of a tool result, joined. */
  function resultText(/** @type {any} */ result) {
    const content = Array.isArray(result.content) ? result.content : [];
    return content.filter((c) => c && c.type === 'text').map((c) => String(c.text)).join(' ');
  }

  function act(/** @type {Action} */ a, /** @type {string} */ name) {
    if (!host) return;
    host.say(a.action === 'connect' ? `Connect me with ${name}.` : a.action === 'save' ? `Save ${name} for later.` : `${a.label}: ${name}`);
  }

  /** Takes the arguments of the current call, unwrapped from `tool_execute` (whose `arguments` may be a JSON string). */
  function takeInput(/** @type {any} */ input) {
    if (!input || typeof input !== 'object') return;
    if (typeof input.toolKey !== 'string') {
      inputKey = null;
      toolInput = input;
      return;
    }
    let args = input.arguments;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        args = null;
      }
    }
    inputKey = input.toolKey;
    toolInput = args && typeof args === 'object' ? args : {};
  }

  let lastHeight = 0;
  function resized() {
    if (!mcpApps) return;
    const height = Math.ceil(document.documentElement.scrollHeight);
    if (height !== lastHeight) {
      lastHeight = height;
      notify('ui/notifications/size-changed', { width: Math.ceil(document.documentElement.scrollWidth), height });
    }
  }

  // --- ChatGPT (window.openai) ---
  /** @type {any} */
  const openai = /** @type {any} */ (window).openai;
  let mcpApps = false;
  if (openai) {
    host = {
      callTool: (name, args) => openai.callTool(name, args),
      say: (text) => openai.sendFollowUpMessage && openai.sendFollowUpMessage({ prompt: text }),
    };
    // Only the globals an event names: a theme change must not undo a page the widget fetched since.
    const refresh = (/** @type {any} */ globals) => {
      if ('toolOutput' in globals) props = propsFrom(globals.toolOutput) || props;
      if ('toolInput' in globals) takeInput(globals.toolInput);
      if ('toolResponseMetadata' in globals) callBack = callBackFrom(globals.toolResponseMetadata) || callBack;
      render();
    };
    window.addEventListener('openai:set_globals', (/** @type {any} */ e) => refresh((e.detail && typeof e.detail.globals === 'object' && e.detail.globals) || openai));
    refresh(openai);
    return;
  }

  // --- MCP Apps (postMessage JSON-RPC with the host) ---
  let nextId = 1;
  /** @type {Map<number, { resolve(v: any): void, reject(e: Error): void }>} */
  const pending = new Map();
  function request(/** @type {string} */ method, /** @type {object} */ params) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      window.parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
    });
  }
  function notify(/** @type {string} */ method, /** @type {object} */ params) {
    window.parent.postMessage({ jsonrpc: '2.0', method, params }, '*');
  }

  const embedded = document.getElementById('widget-data');
  if (window.parent === window) {
    const data = embedded && embedded.textContent ? propsFrom(JSON.parse(embedded.textContent)) : null;
    if (data) root.replaceChildren(...view.plain(data));
    else render();
    return;
  }

  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id != null && pending.has(m.id) && !m.method) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(new Error(m.error.message || 'request failed'));
      else p?.resolve(m.result);
      return;
    }
    if (m.method === 'ui/notifications/tool-input') {
      takeInput(m.params && m.params.arguments);
    } else if (m.method === 'ui/notifications/tool-result') {
      props = propsFrom(m.params) || props;
      callBack = callBackFrom(m.params && m.params._meta) || callBack;
      render();
    }
  });
  mcpApps = true;
  host = {
    callTool: (name, args) => request('tools/call', { name, arguments: args }),
    say: (text) => request('ui/message', { role: 'user', content: [{ type: 'text', text }] }).catch(() => {}),
  };
  render();
  // A frame whose parent never answers is not an MCP Apps host.
  const noHost = new Promise((_, reject) => setTimeout(() => reject(new Error('no host')), 3000));
  Promise.race([
    request('ui/initialize', {
      appInfo: { name: 'index-widgets', version: '1.0.0' },
      appCapabilities: {},
      protocolVersion: '2026-01-26',
    }),
    noHost,
  ]).then(
    (/** @type {any} */ result) => {
      const tool = result && result.hostContext && result.hostContext.toolInfo && result.hostContext.toolInfo.tool;
      if (tool && typeof tool.name === 'string') hostToolName = tool.name;
      notify('ui/notifications/initialized', {});
    },
    () => {
      host = null;
      render();
    },
  );
})();
