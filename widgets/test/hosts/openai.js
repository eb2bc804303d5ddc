// A ChatGPT-style host: the App comes from the tool definition's
// _meta["openai/outputTemplate"], read by a client without the MCP Apps
// extension (so as text/html+skybridge), and talks to its host through
// `window.openai`, set up before the page's own scripts run. The widget's
// window.openai.callTool(name, args) becomes a tools/call of that name.
import { connect, cspMeta, listedTool, loaded, readTemplate, sandboxedFrame, stage, summary, withHead } from './common.js';

const SKYBRIDGE_MIME = 'text/html+skybridge';

window.hostLog = [];

/**
 * Runs inside the App's frame, before its scripts: `window.openai` with the
 * globals, its methods as messages to the host, `openai:set_globals` when the
 * host changes a global, and the page's height reported as it changes.
 * (Serialised into the page: it must use nothing from outside itself.)
 */
function openaiBridge(globals) {
  const pending = new Map();
  let lastId = 0;
  const ask = (type, payload) =>
    new Promise((resolve, reject) => {
      const id = ++lastId;
      pending.set(id, { resolve, reject });
      window.parent.postMessage({ type, id, ...payload }, '*');
    });
  const report = (height) => window.parent.postMessage({ type: 'openai:resize', height }, '*');
  window.openai = {
    ...globals,
    callTool: (name, args) => ask('openai:callTool', { name, args }),
    sendFollowUpMessage: ({ prompt }) => ask('openai:sendFollowUpMessage', { prompt }),
    setWidgetState: (state) => ask('openai:setWidgetState', { state }),
    requestDisplayMode: ({ mode }) => ask('openai:requestDisplayMode', { mode }),
    openExternal: ({ href }) => ask('openai:openExternal', { href }),
    notifyIntrinsicHeight: report,
  };
  window.addEventListener('message', (event) => {
    const m = event.data;
    if (event.source !== window.parent || !m) return;
    if (m.type === 'openai:set_globals') {
      Object.assign(window.openai, m.globals);
      window.dispatchEvent(new CustomEvent('openai:set_globals', { detail: { globals: m.globals } }));
    } else if (m.type === 'openai:reply' && pending.has(m.id)) {
      const { resolve, reject } = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) reject(new Error(m.error));
      else resolve(m.result);
    }
  });
  const html = document.documentElement;
  new ResizeObserver(() => report(html.getBoundingClientRect().height)).observe(html);
}

const script = (fn, arg) => `<script>(${fn})(${JSON.stringify(arg).replace(/</g, '\\u003c')});</script>`;

/** The CSP the template asks for, in ChatGPT's keys (or MCP Apps' where those are missing). */
function cspOf(meta) {
  const openai = meta['openai/widgetCSP'];
  if (openai) return { connectDomains: openai.connect_domains, resourceDomains: openai.resource_domains };
  return meta.ui?.csp;
}

/** A call result as ChatGPT resolves `callTool` with it. */
const asCallToolResponse = (result) => ({
  structuredContent: result.structuredContent,
  content: result.content,
  _meta: result._meta,
  isError: result.isError === true,
});

/** Answers the App's `window.openai` messages: tool calls through `client`, globals it may change. */
function serve(iframe, client, globals) {
  const send = (message) => iframe.contentWindow.postMessage(message, '*');
  const setGlobals = (changed) => {
    Object.assign(globals, changed);
    send({ type: 'openai:set_globals', globals: changed });
  };
  const handlers = {
    'openai:callTool': async ({ name, args }) => asCallToolResponse(await client.callTool({ name, arguments: args ?? {} })),
    'openai:sendFollowUpMessage': async ({ prompt }) => void window.hostLog.push({ followUp: prompt }),
    'openai:setWidgetState': async ({ state }) => void setGlobals({ widgetState: state }),
    'openai:requestDisplayMode': async ({ mode }) => (setGlobals({ displayMode: mode }), { mode }),
    'openai:openExternal': async ({ href }) => void window.hostLog.push({ openExternal: href }),
  };
  window.addEventListener('message', async (event) => {
    const m = event.data;
    if (event.source !== iframe.contentWindow || !m) return;
    if (m.type === 'openai:resize') {
      iframe.style.height = `${Math.ceil(m.height)}px`;
      return;
    }
    const handle = handlers[m.type];
    if (!handle) return;
    window.hostLog.push({ [m.type]: m.name ?? m.mode ?? null });
    try {
      send({ type: 'openai:reply', id: m.id, result: await handle(m) });
    } catch (e) {
      send({ type: 'openai:reply', id: m.id, error: String(e?.message ?? e) });
    }
  });
}

/** Calls `name` with `args` and shows its widget with the result; resolves once the widget has loaded. */
window.runHost = async ({ tool: name, args, token }) => {
  stage('connecting to the gateway');
  const client = await connect({ token });
  stage('listing tools');
  const tool = await listedTool(client, name);
  const uri = tool._meta?.['openai/outputTemplate'];
  if (typeof uri !== 'string') {
    throw new Error(`${name}'s definition in tools/list has no _meta["openai/outputTemplate"]: ${JSON.stringify(tool._meta ?? null)}`);
  }
  stage(`reading ${uri}`);
  const { html, meta } = await readTemplate(client, uri, SKYBRIDGE_MIME);
  stage(`calling ${name}`);
  const result = await client.callTool({ name, arguments: args });
  const globals = {
    toolInput: args,
    toolOutput: result.structuredContent ?? null,
    toolResponseMetadata: result._meta ?? null,
    widgetState: null,
    theme: 'light',
    displayMode: 'inline',
    maxHeight: 4000,
    locale: 'en-US',
    userAgent: { device: { type: 'desktop' }, capabilities: { hover: true, touch: false } },
    safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
  };
  const iframe = sandboxedFrame();
  serve(iframe, client, globals);
  const ready = loaded(iframe);
  iframe.srcdoc = withHead(html, cspMeta(cspOf(meta)) + script(openaiBridge, globals));
  stage('loading the widget');
  await ready;
  stage('done');
  return { uri, ...summary(result) };
};
