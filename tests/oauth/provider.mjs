// A real OAuth 2.1 / OpenID authorization server for the gateway's tests:
// oidc-provider on 127.0.0.1, with dynamic client registration, authorization
// code + PKCE, resource indicators (RFC 8707: the token's `aud` is the
// resource the client asked for), JWT or opaque access tokens, introspection
// and revocation. Its dev login page accepts any login name, which becomes
// `sub`, so a test chooses who signs in.
//
//   node provider.mjs [--port N] [--format jwt|opaque] [--access-ttl SECONDS]
//
// Prints one line on stdout when ready: {"issuer":"http://127.0.0.1:PORT","port":PORT}.
// Exits when its stdin closes, so it never outlives the test binary that started it.
//
// TEST-ONLY endpoints (never part of a real deployment) let tests exercise
// key rotation and craft refused tokens with the provider's real keys:
//   POST /test/rotate   -> a new signing key signs from now on; old keys stay published
//   POST /test/drop-old -> unpublish every key but the newest
//   POST /test/mint {"claims":{...}, "kid":K?, "alg":"none"?} -> a JWT with exactly
//        these claims, signed by the newest key or key K (dropped keys too), or unsigned
//   POST /test/revoke {"login":"alice"} -> revoke every grant of that user, as an
//        administrator would: their refresh tokens stop working

import http from 'node:http';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT, base64url } from 'jose';
import Provider, { errors } from 'oidc-provider';
// oidc-provider's own in-memory adapter, but one store for every Provider
// instance: its default gives each instance a fresh store, so a key swap
// would forget registered clients, grants, sessions and opaque tokens.
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';

// stdout carries only the ready line (the test reads it, then stops
// reading); oidc-provider's own notices go to stderr.
console.log = console.error;
console.info = console.error;

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    format: { type: 'string', default: 'jwt' },
    'access-ttl': { type: 'string', default: '600' },
  },
});
const accessTtl = Number(args['access-ttl']);

// Scopes a resource (the gateway) may be granted.
const RESOURCE_SCOPES = 'mcp:tools mcp:admin privy:token:exchange';
// Groups of the test users, as an IdP's directory would give them.
const GROUPS = { alice: ['team-a'], bob: ['team-b'], carol: [] };

/** Every signing key made, newest last; each a private JWK with kid, alg and use.
 * The JWKS publishes keys[dropped..]; dropped ones stay here so /test/mint can
 * still sign with them. */
const keys = [];
let dropped = 0;
const published = () => keys.slice(dropped);
async function addKey() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  Object.assign(jwk, { kid: `k${keys.length + 1}-${Date.now().toString(36)}`, alg: 'RS256', use: 'sig' });
  keys.push({ jwk, privateKey });
  return jwk.kid;
}

const memory = createMemoryAdapter();
/** Grant ids by account, so /test/revoke can find a user's grants. */
const grantsOf = new Map();
function adapter(model) {
  const inner = memory(model);
  if (model === 'Grant') {
    const upsert = inner.upsert.bind(inner);
    inner.upsert = async (id, payload, expiresIn) => {
      if (payload.accountId) grantsOf.set(payload.accountId, (grantsOf.get(payload.accountId) ?? new Set()).add(id));
      return upsert(id, payload, expiresIn);
    };
  }
  return inner;
}
let issuer;
/** The current provider's request handler. */
let handle;

/** A provider over the current keys (oidc-provider's key set is fixed per
 * instance, so rotation swaps instances; the shared adapter keeps clients,
 * grants and sessions). The newest key signs. */
function build() {
  const jwks = { keys: published().reverse().map((k) => k.jwk) };
  const p = new Provider(issuer, {
    adapter,
    jwks,
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => {
          const url = new URL(resourceIndicator);
          if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
            throw new errors.InvalidTarget('this test provider serves loopback resources only');
          }
          return {
            scope: RESOURCE_SCOPES,
            audience: resourceIndicator,
            accessTokenTTL: accessTtl,
            accessTokenFormat: args.format === 'opaque' ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // OAuth 2.1: authorization code only (no implicit or hybrid flows).
    responseTypes: ['code'],
    // Listed so clients may register with them (DCR); granted per resource above.
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
    extraTokenClaims: (_ctx, token) =>
      token.accountId && GROUPS[token.accountId] ? { groups: GROUPS[token.accountId] } : undefined,
    ttl: { AccessToken: accessTtl, ClientCredentials: accessTtl },
    // Public clients (the MCP SDK registers with token_endpoint_auth_method "none").
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
  });
  p.on('server_error', (_ctx, err) => console.error('provider error:', err));
  handle = p.callback();
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString();
  return text ? JSON.parse(text) : {};
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function mint({ claims, kid, alg }) {
  if (alg === 'none') {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    return `${header}.${base64url.encode(JSON.stringify(claims))}.`;
  }
  const key = kid === undefined ? keys[keys.length - 1] : keys.find((k) => k.jwk.kid === kid);
  if (!key) throw new Error(`no key ${kid}; known: ${keys.map((k) => k.jwk.kid).join(', ')}`);
  const { jwk, privateKey } = key;
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' }).sign(privateKey);
}

async function admin(req, res) {
  const path = new URL(req.url, issuer).pathname;
  if (req.method !== 'POST') return json(res, 405, { error: 'POST only' });
  const input = await body(req);
  switch (path) {
    case '/test/rotate': {
      const kid = await addKey();
      build();
      return json(res, 200, { kid, kids: published().map((k) => k.jwk.kid) });
    }
    case '/test/drop-old':
      dropped = keys.length - 1;
      build();
      return json(res, 200, { kids: published().map((k) => k.jwk.kid) });
    case '/test/mint':
      return json(res, 200, { token: await mint(input) });
    case '/test/revoke': {
      const grants = [...(grantsOf.get(input.login) ?? [])];
      for (const id of grants) {
        await memory('RefreshToken').revokeByGrantId(id);
        await memory('Grant').destroy(id);
      }
      grantsOf.delete(input.login);
      return json(res, 200, { revoked: grants.length });
    }
    default:
      return json(res, 404, { error: 'unknown test endpoint' });
  }
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/test/')) {
    admin(req, res).catch((e) => json(res, 500, { error: String(e) }));
    return;
  }
  // oidc-provider serves discovery at both /.well-known/oauth-authorization-server
  // (RFC 8414, which the MCP SDK tries first) and /.well-known/openid-configuration.
  handle(req, res);
});

await addKey();
server.listen(Number(args.port), '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  build();
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
