// @ts-check
/**
 * Index Discover: renders the `structuredContent` of `discover_filter` as cards.
 *
 * Input props (the tool's structuredContent; see README "The discovery widget"):
 * @typedef {{ title: string, subtitle?: string, badge?: string, badges?: string[], avatar?: string, initials?: string, userId?: string }} Header
 * @typedef {{ context: string, stats: { label: string, value: number | string }[], vibecheck: string, vibecheckAvailable?: boolean }} Body
 * @typedef {{ label: string, hint: string, action: string, payload: { userId: string } }} Action
 * @typedef {{ header: Header, body: Body, actions: Action[] }} Card
 * @typedef {{ page: number, limit: number, hasNext: boolean, hasPrev: boolean }} Pagination
 * @typedef {{ hasNext: boolean, hasPrev: boolean, nextPage: number | null, prevPage: number | null, nextArguments?: object | null, prevArguments?: object | null }} PageHint
 * @typedef {{ targetUserId: string, synthesis: string, status?: string }} VibeCheck
 * @typedef {{ cards: Card[], summary?: string, pagination?: Pagination, vibechecks?: VibeCheck[], pageHint?: PageHint, generatedIntents?: object[] | null }} Props
 *
 * Hosts: ChatGPT's `window.openai` (toolOutput, toolInput, callTool,
 * `openai:set_globals`), else the MCP Apps postMessage bridge (`ui/initialize`,
 * `ui/notifications/tool-result`, `tools/call`, `ui/message`). With neither,
 * a plain list of whatever data the page carries. No storage, no analytics,
 * no requests of its own but avatar images (`https:` ones, whose origins the
 * gateway declares in the widget's CSP, and inline `data:` ones); every piece
 * of data goes into the page as text.
 */
(function () {
  'use strict';

  /** The tool this widget belongs to, and how the gateway names it. */
  const TOOL = 'discover_filter';
  const GATEWAY_TOOL = 'tool_execute';
  const SAFE_LINK = /^https?:\/\//i;
  const SAFE_AVATAR = /^(https:\/\/|data:image\/)/i;
  const MARKDOWN_LINK = /\[([^\]\n]{1,300})\]\(([^)\s]{1,2000})\)/g;

  const root = /** @type {HTMLElement} */ (document.getElementById('root'));
  /** @type {Props | null} */
  let props = null;
  /** @type {Record<string, any> | null} the arguments of the call being shown */
  let toolInput = null;
  /** @type {{ callTool(name: string, args: object): Promise<any>, say(text: string): void } | null} */
  let host = null;
  let busy = false;

  /** Props from a tool result, at whichever level the host put them. */
  function propsFrom(/** @type {any} */ output) {
    if (!output || typeof output !== 'object') return null;
    const content = output.structuredContent || (output.result && output.result.structuredContent) || output;
    return content && Array.isArray(content.cards) ? /** @type {Props} */ (content) : null;
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

  /** The avatar image, or the initials when there is none or it fails to load (a host's CSP may block it). */
  function avatar(/** @type {Header} */ h) {
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
    const vibe = el('p', { class: b.vibecheckAvailable === false ? 'vibe missing' : 'vibe' });
    vibe.append(richText(b.vibecheck || 'VibeCheck summary unavailable.'));
    const actions = el('div', { class: 'actions' });
    for (const a of card.actions || []) {
      const button = el('button', { type: 'button', title: a.hint || '', 'data-action': a.action }, a.label);
      if (a.action === 'connect') button.classList.add('primary');
      if (!host) button.setAttribute('disabled', '');
      button.addEventListener('click', () => act(a, h.title));
      actions.append(button);
    }
    return el(
      'article',
      { class: 'card', 'data-user-id': h.userId || '' },
      el('div', { class: 'card-header' }, avatar(h), el('div', { class: 'who' }, el('h2', { class: 'name' }, h.title), badges)),
      h.subtitle ? el('p', { class: 'subtitle' }, h.subtitle) : null,
      el('h3', { class: 'section-title' }, 'What could happen here'),
      vibe,
      intents.childElementCount ? el('h3', { class: 'section-title' }, 'Shared intents') : null,
      intents.childElementCount ? intents : null,
      stats,
      actions,
    );
  }

  function banner(/** @type {Props} */ p) {
    const chips = el('div', { class: 'banner', role: 'status' });
    const generated = Array.isArray(p.generatedIntents) ? p.generatedIntents.length : 0;
    if (generated) chips.append(el('span', { class: 'chip' }, `${generated} intent${generated === 1 ? '' : 's'} generated`));
    const n = p.cards.length;
    chips.append(el('span', { class: 'chip' }, `${n} match${n === 1 ? '' : 'es'}`));
    if (p.pagination) chips.append(el('span', { class: 'chip' }, `Page ${p.pagination.page}`));
    if (p.summary) chips.append(el('p', { class: 'summary' }, p.summary));
    return chips;
  }

  function pager(/** @type {Props} */ p) {
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

  function render() {
    root.replaceChildren();
    if (!props) {
      root.append(el('p', { class: 'status' }, host ? 'Waiting for discovery results…' : 'No discovery results to show.'));
      return resized();
    }
    root.append(banner(props));
    if (props.cards.length === 0) {
      root.append(el('div', { class: 'empty' }, 'No matches found.'));
    } else {
      root.append(el('section', { class: 'cards' }, ...props.cards.map(cardView)));
    }
    root.append(pager(props));
    resized();
  }

  /** Without a host: a plain, readable list, no buttons. */
  function renderPlain(/** @type {Props} */ p) {
    root.replaceChildren(banner(p));
    const list = el('ol', { class: 'plain' });
    for (const c of p.cards) {
      const item = el('li', {}, el('strong', {}, c.header.title), ` (${(c.header.badges || []).join(', ')}): `);
      item.append(richText(c.body.vibecheck || ''));
      list.append(item);
    }
    root.append(p.cards.length ? list : el('div', { class: 'empty' }, 'No matches found.'));
  }

  /** Calls the same tool for another page, through the gateway when that is how it was called. */
  async function goTo(/** @type {object} */ args) {
    if (!host || busy) return;
    busy = true;
    render();
    try {
      const viaGateway = toolInput && typeof toolInput.toolKey === 'string';
      const result = viaGateway
        ? await host.callTool(GATEWAY_TOOL, { toolKey: toolInput?.toolKey, arguments: args })
        : await host.callTool(TOOL, args);
      const next = propsFrom(result);
      if (next) {
        props = next;
        toolInput = viaGateway ? { toolKey: toolInput?.toolKey, ...args } : { ...args };
      }
    } catch (e) {
      root.prepend(el('p', { class: 'status', role: 'alert' }, `Could not load the page: ${e instanceof Error ? e.message : String(e)}`));
    } finally {
      busy = false;
      render();
    }
  }

  function act(/** @type {Action} */ a, /** @type {string} */ name) {
    if (!host) return;
    host.say(a.action === 'connect' ? `Connect me with ${name}.` : a.action === 'save' ? `Save ${name} for later.` : `${a.label}: ${name}`);
  }

  /** Arguments of the current call: `toolInput`, unwrapped from `tool_execute` if need be. */
  function argumentsOf(/** @type {any} */ input) {
    if (!input || typeof input !== 'object') return null;
    return input.toolKey ? { toolKey: input.toolKey, ...(input.arguments || {}) } : input;
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
    const refresh = () => {
      props = propsFrom(openai.toolOutput) || props;
      toolInput = argumentsOf(openai.toolInput) || toolInput;
      render();
    };
    window.addEventListener('openai:set_globals', refresh);
    refresh();
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

  const embedded = document.getElementById('index-discover-data');
  if (window.parent === window) {
    const data = embedded && embedded.textContent ? propsFrom(JSON.parse(embedded.textContent)) : null;
    if (data) renderPlain(data);
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
      toolInput = argumentsOf(m.params && m.params.arguments) || toolInput;
    } else if (m.method === 'ui/notifications/tool-result') {
      props = propsFrom(m.params) || props;
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
      appInfo: { name: 'index-discover', version: '1.0.0' },
      appCapabilities: {},
      protocolVersion: '2026-01-26',
    }),
    noHost,
  ]).then(
    () => notify('ui/notifications/initialized', {}),
    () => {
      host = null;
      render();
    },
  );
})();
