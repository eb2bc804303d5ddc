// The test hosts' web server, on 127.0.0.1:0: serves the host pages, proxies
// /mcp to the gateway as it streams (SSE answers and the client's GET stream
// pass through chunk by chunk, and the GET stream ends when the page goes),
// records each JSON-RPC request sent there, and refuses and records every
// other request.
import http from 'node:http';
import https from 'node:https';

/** Headers that belong to one hop, not to the exchange. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
const endToEnd = (headers) => Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP.has(k.toLowerCase())));

/**
 * Starts the server. `pages` maps a path to `{ type, body }`; `gateway` is the
 * gateway's MCP endpoint. The log's `rpc` holds `{ method }` per JSON-RPC
 * request in order (with `name` and `arguments` for tools/call), `http`
 * `{ request, authorization }` per request to /mcp, and `refused` each
 * refused `METHOD path`.
 */
export async function serve({ pages, gateway }) {
  const log = { rpc: [], http: [], refused: [] };
  const server = http.createServer({ requestTimeout: 0 }, (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/mcp') return proxy(req, res, gateway, log);
    const page = req.method === 'GET' && pages.get(path);
    if (page) {
      res.writeHead(200, { 'content-type': page.type, 'cache-control': 'no-store' });
      return res.end(page.body);
    }
    log.refused.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('refused by the test server');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    log,
    /** Forgets what was recorded, for the next test. */
    reset() {
      for (const list of Object.values(log)) list.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Forwards one /mcp request to `gateway` (keeping the query) and streams the answer back. */
function proxy(req, res, gateway, log) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    log.http.push({ request: `${req.method} ${req.url}`, authorization: req.headers.authorization });
    if (req.method === 'POST') record(body, log);
    const target = new URL(gateway);
    target.search = new URL(req.url, 'http://x').search;
    const client = target.protocol === 'https:' ? https : http;
    const upstream = client.request(target, { method: req.method, headers: endToEnd(req.headers) }, (answer) => {
      res.writeHead(answer.statusCode, answer.statusMessage, endToEnd(answer.headers));
      res.flushHeaders();
      answer.pipe(res);
    });
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the gateway at ${gateway} did not answer: ${e.message}`);
    });
    // The page went (or the answer ended): end the gateway side too.
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  });
}

/** Notes each JSON-RPC request in `body` (one message or a batch). */
function record(body, log) {
  let parsed;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    log.rpc.push({ method: '(not JSON)' });
    return;
  }
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof m?.method !== 'string') continue;
    const entry = { method: m.method };
    if (m.method === 'tools/call') Object.assign(entry, { name: m.params?.name, arguments: m.params?.arguments });
    log.rpc.push(entry);
  }
}
