// The browser `mcp-gateway login` asks for, played headless: opens the
// authorization URL, signs in as `--login` and consents (person.mjs), then
// follows the redirect to the gateway's loopback listener, as a browser
// would, and prints that page's status.
//
//   node browser.mjs --url AUTHORIZATION_URL --login alice

import { parseArgs } from 'node:util';
import { playUser } from './person.mjs';

const { values: args } = parseArgs({
  options: { url: { type: 'string' }, login: { type: 'string', default: 'alice' } },
});
if (!args.url) {
  console.error('usage: node browser.mjs --url AUTHORIZATION_URL [--login NAME]');
  process.exit(2);
}

try {
  const redirectUri = new URL(args.url).searchParams.get('redirect_uri');
  if (!redirectUri) throw new Error('the authorization URL names no redirect_uri');
  const back = await playUser(args.url, args.login, redirectUri);
  const response = await fetch(back);
  console.log(JSON.stringify({ redirect: back.origin + back.pathname, status: response.status }));
  if (!response.ok) process.exit(1);
} catch (e) {
  console.error(`browser failed: ${e.stack ?? e}`);
  process.exit(1);
}
