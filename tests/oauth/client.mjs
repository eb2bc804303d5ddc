// An MCP client that speaks only OAuth, run with no human: the official
// TypeScript SDK's OAuth support does the MCP authorization flow (401 →
// protected-resource metadata → authorization-server metadata → dynamic
// client registration → authorization code + PKCE with the `resource`
// parameter → token), and this script plays the user at oidc-provider's
// login and consent pages over HTTP.
//
//   node client.mjs --url http://127.0.0.1:PORT/mcp --login alice [--scope "mcp:tools"]
//                   [--query "what to find"] [--execute KEY --args JSON]
//
// Prints one JSON line: {"tools", "discovery", "execute", "registeredClientId", "accessTokenAud"}.

import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    login: { type: 'string', default: 'alice' },
    scope: { type: 'string', default: 'mcp:tools' },
    query: { type: 'string', default: 'echo' },
    execute: { type: 'string' },
    args: { type: 'string', default: '{}' },
  },
});
if (!args.url) {
  console.error('usage: node client.mjs --url URL [--login NAME] [--scope S] [--query Q] [--execute KEY --args JSON]');
  process.exit(2);
}

// Never served: the code is read from the Location header that points here.
const REDIRECT_URI = 'http://127.0.0.1:1/callback';

/** The user agent's cookie jar, by name (one host: the provider). */
const cookies = new Map();
function remember(response) {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
}
const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

/** Follows redirects by hand (to keep cookies) until one leaves for the redirect URI. */
async function browse(url, init = {}) {
  let next = new URL(url);
  let request = init;
  for (let hops = 0; hops < 20; hops += 1) {
    if (next.href.startsWith(REDIRECT_URI)) return { redirectedTo: next };
    const response = await fetch(next, { ...request, redirect: "manual", headers: { ...request.headers, cookie: cookieHeader() } })
      .catch((e) => { throw new Error(`${next.href}: ${e.cause ?? e}`); });
    remember(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      next = new URL(location, next);
      request = {};
      continue;
    }
    if (!response.ok) throw new Error(`${next.href}: HTTP ${response.status}: ${await response.text()}`);
    return { page: await response.text(), at: next };
  }
  throw new Error('too many redirects');
}

/** Signs in as `login` and consents, as a person would in the browser. */
async function playUser(authorizationUrl) {
  let step = await browse(authorizationUrl);
  while (!step.redirectedTo) {
    const action = /<form[^>]*action="([^"]+)"/.exec(step.page)?.[1];
    if (!action) throw new Error(`no form at ${step.at.href}`);
    const form = step.page.includes('name="login"')
      ? { prompt: 'login', login: args.login, password: 'any' }
      : { prompt: 'consent' };
    step = await browse(new URL(action, step.at), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
  const { redirectedTo } = step;
  const error = redirectedTo.searchParams.get('error');
  if (error) throw new Error(`authorization refused: ${error}: ${redirectedTo.searchParams.get('error_description')}`);
  return redirectedTo.searchParams.get('code');
}

/** What the SDK needs remembered during the flow, in memory. */
class MemoryProvider {
  constructor() {
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.code = undefined;
  }
  get redirectUrl() { return REDIRECT_URI; }
  get clientMetadata() {
    return {
      client_name: 'mcp-gateway oauth test',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: args.scope,
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) { this.code = await playUser(url); }
}

const structured = (r) => ({ structuredContent: r.structuredContent, isError: r.isError ?? false, content: r.content });

async function main() {
  const auth = new MemoryProvider();
  const url = new URL(args.url);
  const client = new Client({ name: 'oauth-test-client', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: auth }));
    throw new Error('the gateway let an unauthenticated client in');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const transport = new StreamableHTTPClientTransport(url, { authProvider: auth });
  await transport.finishAuth(auth.code);
  const signedIn = new Client({ name: 'oauth-test-client', version: '1.0.0' });
  await signedIn.connect(transport);
  const tools = (await signedIn.listTools()).tools.map((t) => t.name);
  const discovery = await signedIn.callTool({ name: 'tool_discovery', arguments: { query: args.query } });
  const execute = args.execute
    ? await signedIn.callTool({ name: 'tool_execute', arguments: { toolKey: args.execute, arguments: JSON.parse(args.args) } })
    : null;
  const token = auth.tokens().access_token;
  let aud = null;
  if (token.split('.').length === 3) aud = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).aud;
  process.stdout.write(`${JSON.stringify({
    tools,
    discovery: structured(discovery),
    execute: execute && structured(execute),
    registeredClientId: auth.clientInformation()?.client_id,
    accessTokenAud: aud,
  })}\n`);
  await signedIn.close();
}

main().catch((e) => {
  console.error(`oauth client failed: ${e.stack ?? e}`);
  process.exit(1);
});
