// What both test hosts do alike: connect an MCP client to the gateway (through
// the test server's /mcp proxy), find a tool in tools/list, read the template
// its definition names, and give it a sandboxed iframe with a CSP <meta>, as
// ext-apps' examples/basic-host does (there the CSP is a header on its sandbox
// proxy page; a srcdoc frame can only carry it inline).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const INFO = { name: 'mcp-gateway widget host test', version: '1.0.0' };

/** Notes what the host is doing, for the test to say where it got stuck. */
export function stage(doing) {
  window.hostStage = doing;
}

/** A client connected to the gateway; `capabilities` as advertised in `initialize`. */
export async function connect({ token, capabilities = {} }) {
  const client = new Client(INFO, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', location.href), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** The tool listed as `name`, from every page of tools/list. */
export async function listedTool(client, name) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tools/list has no tool named ${name}; it lists: ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

/** The template at `uri`: its HTML and its `_meta`, which must come as `mimeType`. */
export async function readTemplate(client, uri, mimeType) {
  const { contents } = await client.readResource({ uri });
  if (contents.length !== 1) throw new Error(`resources/read ${uri} gave ${contents.length} contents, not 1`);
  const [content] = contents;
  if (content.mimeType !== mimeType) {
    throw new Error(`resources/read ${uri} answered ${content.mimeType}, not ${mimeType}`);
  }
  const html = 'blob' in content ? atob(content.blob) : content.text;
  return { html, meta: content._meta ?? {} };
}

/** Drops entries that could break out of a CSP source list (as basic-host's csp.ts does). */
const sources = (domains) => (Array.isArray(domains) ? domains : []).filter((d) => typeof d === 'string' && !/[;\r\n'" ]/.test(d));

/**
 * A CSP `<meta>` from an App's declared domains: scripts and styles inline
 * only, images, fonts and media from `resourceDomains`, fetches only to
 * `connectDomains`, nothing framed, no plugins, no <base>.
 */
export function cspMeta({ connectDomains, resourceDomains } = {}) {
  const resources = sources(resourceDomains).join(' ');
  const connect = sources(connectDomains).join(' ') || "'none'";
  const policy = [
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    "style-src 'unsafe-inline'",
    `img-src data: blob: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `media-src data: blob: ${resources}`.trim(),
    `connect-src ${connect}`,
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
}

/** `html` with `markup` first in its <head> (or first of all), so it applies before the page's own tags. */
export function withHead(html, markup) {
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + markup + html.slice(head.index + head[0].length);
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return html.slice(0, at) + markup + html.slice(at);
}

/** An empty sandboxed iframe (scripts only: an opaque origin), in the page. */
export function sandboxedFrame() {
  const iframe = document.createElement('iframe');
  iframe.id = 'app';
  iframe.title = 'App';
  iframe.setAttribute('sandbox', 'allow-scripts');
  document.getElementById('conversation').append(iframe);
  return iframe;
}

/** Resolves once `iframe` has loaded its current document. */
export const loaded = (iframe) => new Promise((resolve) => iframe.addEventListener('load', resolve, { once: true }));

/** What the test needs of a call result. */
export const summary = (result) => ({
  structuredContent: result.structuredContent ?? null,
  meta: result._meta ?? null,
  isError: result.isError === true,
  text: (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n'),
});
