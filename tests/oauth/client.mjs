// An MCP client that speaks only OAuth, run with no human: the official
// TypeScript SDK's OAuth support does the MCP authorization flow (401 →
// protected-resource metadata → authorization-server metadata → dynamic
// client registration → authorization code + PKCE with the `resource`
// parameter → token), and person.mjs plays the user at oidc-provider's
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
import { playUser } from './person.mjs';

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
  async redirectToAuthorization(url) {
    this.code = (await playUser(url, args.login, REDIRECT_URI)).searchParams.get('code');
  }
}

/** The last HTTP refusal the SDK met (MCP endpoint, metadata, token), for the failure message. */
let refusal;
async function watchedFetch(url, init) {
  const response = await fetch(url, init);
  // A GET on the MCP endpoint is the optional SSE stream: a 404 or 405 there is no refusal.
  const sseProbe = (init?.method ?? 'GET') === 'GET' && String(url) === new URL(args.url).href;
  if (response.status >= 400 && !sseProbe) {
    refusal = `HTTP ${response.status} from ${init?.method ?? 'GET'} ${url}`
      + `, WWW-Authenticate: ${response.headers.get('www-authenticate') ?? '(none)'}`;
  }
  return response;
}

const structured = (r) => ({ structuredContent: r.structuredContent, isError: r.isError ?? false, content: r.content });

async function main() {
  const auth = new MemoryProvider();
  const url = new URL(args.url);
  const client = new Client({ name: 'oauth-test-client', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: auth, fetch: watchedFetch }));
    throw new Error('the gateway let an unauthenticated client in');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  refusal = undefined; // that first 401 was the expected one
  const transport = new StreamableHTTPClientTransport(url, { authProvider: auth, fetch: watchedFetch });
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
  if (refusal) console.error(`last refusal: ${refusal}`);
  process.exit(1);
});
