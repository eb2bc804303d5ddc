// The gateway's MCP Apps rendered the way real hosts render them, in Debian's
// headless Chromium (driven by playwright-core), against a real gateway that
// tests/suite/widget.rs starts in front of a fake Index API. Two hosts:
//
// - an MCP Apps host on the official host side, @modelcontextprotocol/ext-apps
//   (test/hosts/mcp-apps.js): a client advertising the MCP Apps extension,
//   the App named by the tool's definition in tools/list, an AppBridge over
//   PostMessageTransport that forwards the App's tools/call to the gateway;
// - a ChatGPT-style host (test/hosts/openai.js): a client without the
//   extension, the template named by the tool's `openai/outputTemplate`, and
//   `window.openai` in the widget's frame, whose callTool(name, args) the
//   host sends to the gateway as tools/call of that name.
//
// Each host page's script is bundled by esbuild here, in memory, and served
// by test/hosts/serve.mjs on 127.0.0.1:0, which proxies /mcp to the gateway
// and records every JSON-RPC request; any other request is refused and
// recorded (the Apps may only ask for avatars, which are refused: the widget
// shows initials). Each App renders in an iframe sandboxed to scripts alone,
// under the CSP its resource declares. Every case is checked in both hosts,
// with no page errors, no CSP violations, and a screenshot.
//
// Environment (all required but the last two):
//   GATEWAY_URL       the gateway's streamable HTTP endpoint (http://127.0.0.1:PORT/mcp)
//   GATEWAY_TOKEN     a bearer token, sent on every request to it
//   HOST_CASES        JSON: tool name as listed -> arguments, for each of
//                     index__discover_filter (needs a second page of matches),
//                     index__discover_connections and index__extract_intent
//                     (each needs at least one connection / intent)
//   WIDGET_ARTIFACTS  where screenshots go (default target/widget-screenshots)
//   CHROMIUM          the browser (default /usr/bin/chromium)
// Run: cd widgets && GATEWAY_URL=… GATEWAY_TOKEN=… HOST_CASES='{…}' node --test test/hosts.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { serve } from './hosts/serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(process.env.WIDGET_ARTIFACTS || join(here, '..', '..', 'target', 'widget-screenshots'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
/** How long one case may take, all of it (the gateway answers a fake Index API). */
const CASE_TIMEOUT_MS = 60_000;
/** How long a host may take to call the tool and hand its App the result. */
const RUN_TIMEOUT_MS = 30_000;
/** How long an App may take to show something, or the page to do something asked. */
const SHOW_TIMEOUT_MS = 15_000;

const HOSTS = [
  { id: 'mcp-apps', title: 'MCP Apps host (ext-apps AppBridge)' },
  { id: 'openai', title: 'ChatGPT host (window.openai)' },
];

/** What each App must show, per tool as the gateway lists it. */
const CASES = {
  index__discover_filter: {
    shows: 'cards, and its Next page calls back index__discover_filter for page 2',
    check: discoverFilter,
  },
  index__discover_connections: {
    shows: 'one article.connection per connection found',
    check: discoverConnections,
  },
  index__extract_intent: {
    shows: 'one li.intent per intent, each removed by index__archive_intent',
    check: extractIntent,
  },
};

/** The test server: host pages, and /mcp proxied to the gateway. */
let server;
let browser;
let args;
let token;

before(async () => {
  const url = required('GATEWAY_URL');
  token = required('GATEWAY_TOKEN');
  args = cases(required('HOST_CASES'));
  assert.ok(existsSync(executablePath), `no Chromium at ${executablePath}: apt-get install chromium (or set CHROMIUM)`);
  mkdirSync(artifacts, { recursive: true });
  server = await serve({ pages: await hostPages(), gateway: url });
  browser = await chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // Sandboxed frames in the page's process, where the route below sees
      // every request they make (isolated, their first requests slip past it).
      '--disable-features=IsolateSandboxedIframes',
      // And nothing that slips past reaches any host but this one.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const host of HOSTS) {
  for (const [tool, { shows, check }] of Object.entries(CASES)) {
    test(`${host.title}: ${tool} shows ${shows}`, { timeout: CASE_TIMEOUT_MS }, async () => {
      const session = await open(host);
      try {
        const shown = await session.run(tool);
        await check({ ...session, shown, tool });
        assertClean(session, tool);
      } finally {
        // Also when it failed: the picture says what the host showed.
        await shoot(session.page, `${host.id}-${tool}`);
        await session.context.close();
      }
    });
  }
}

async function shoot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true }).catch((e) => {
    console.error(`no screenshot of ${name}: ${e.message}`);
  });
}

function required(name) {
  const value = process.env[name];
  assert.ok(value, `$${name} is not set: tests/suite/widget.rs runs this file against a gateway it starts (see the top of ${fileURLToPath(import.meta.url)})`);
  return value;
}

/** HOST_CASES, which must give arguments for every case. */
function cases(json) {
  let parsed;
  try {
    parsed = JSON.parse(json);
  } catch (e) {
    assert.fail(`$HOST_CASES is not JSON (${e.message}): ${json}`);
  }
  for (const tool of Object.keys(CASES)) {
    const given = parsed?.[tool];
    assert.ok(given && typeof given === 'object' && !Array.isArray(given), `$HOST_CASES gives no arguments object for ${tool}: ${json}`);
  }
  return parsed;
}

/** Each host's page and its script, bundled with its npm dependencies. */
async function hostPages() {
  const pages = new Map();
  for (const { id, title } of HOSTS) {
    const { outputFiles } = await build({
      entryPoints: [join(here, 'hosts', `${id}.js`)],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'chrome120',
      legalComments: 'none',
      logLevel: 'silent',
    });
    pages.set(`/${id}.js`, { type: 'text/javascript; charset=utf-8', body: outputFiles[0].text });
    pages.set(`/${id}.html`, { type: 'text/html; charset=utf-8', body: shell(id, title) });
  }
  return pages;
}

/** A chat-like page holding one App frame (#app, added by the host script). */
const shell = (id, title) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title>
<style>
  body { margin: 0; padding: 24px; font: 15px/1.4 system-ui, sans-serif; background: #f3f4f6; color: #111827; }
  h1 { margin: 0 0 12px; font-size: 14px; font-weight: 600; color: #4b5563; }
  #conversation { max-width: 760px; }
  #app { display: block; width: 100%; height: 480px; border: 1px solid #d1d5db; border-radius: 12px; background: #fff; }
</style></head>
<body><h1>${title}</h1><div id="conversation"></div><script type="module" src="/${id}.js"></script></body></html>`;

/**
 * A fresh browser context on `host`'s page, watched: page errors and console
 * errors in any frame (Chromium logs each CSP violation as one), and every
 * request that is not to the test server, refused.
 */
async function open(host) {
  server.reset();
  const context = await browser.newContext({ viewport: { width: 820, height: 900 } });
  context.setDefaultTimeout(SHOW_TIMEOUT_MS);
  const page = await context.newPage();
  const problems = [];
  const elsewhere = [];
  await context.route(
    (url) => url.origin !== server.origin,
    (route) => {
      const request = route.request();
      elsewhere.push({ url: request.url(), type: request.resourceType(), fromApp: fromApp(page, request) });
      return route.abort('blockedbyclient');
    },
  );
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // A refused request is logged as "Failed to load resource"; those are checked apart.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error: ${m.text()}`);
  });
  await page.goto(`${server.origin}/${host.id}.html`);
  await page.waitForFunction(() => typeof window.runHost === 'function');
  const run = (tool) => shownBy(page, tool);
  return { host, context, page, app: page.frameLocator('#app'), problems, elsewhere, run };
}

/**
 * Has the host page call `tool` with its HOST_CASES arguments and show its
 * App; the call's result, once the App has it. Fails when the host does not
 * get there (saying where it stopped) or the tool's result is an error.
 */
async function shownBy(page, tool) {
  const doing = () => page.evaluate(() => window.hostStage).catch(() => 'gone');
  let timer;
  const stuck = new Promise((resolve) => {
    timer = setTimeout(resolve, RUN_TIMEOUT_MS);
  }).then(async () => assert.fail(`the host did not show ${tool}'s App within ${RUN_TIMEOUT_MS} ms; it was ${await doing()}`));
  const run = page.evaluate((c) => window.runHost(c), { tool, args: args[tool], token }).catch(async (e) => {
    throw new Error(`the host failed ${await doing()}: ${e.message}`);
  });
  try {
    const shown = await Promise.race([run, stuck]);
    assert.equal(shown.isError, false, `${tool} answered an error: ${shown.text}`);
    return shown;
  } finally {
    clearTimeout(timer);
  }
}

function fromApp(page, request) {
  try {
    return request.frame() !== page.mainFrame();
  } catch {
    return false;
  }
}

/** Waits for `want(count)` of `locator`'s elements to hold, and gives the count. */
async function settled(locator, want) {
  const deadline = Date.now() + SHOW_TIMEOUT_MS;
  let count = await locator.count();
  while (!want(count) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    count = await locator.count();
  }
  return count;
}

/** The tools/call requests the gateway got since `mark` (an index into the log). */
const callsSince = (mark) => server.log.rpc.slice(mark).filter((r) => r.method === 'tools/call');

async function discoverFilter({ app, tool }) {
  const cards = await settled(app.locator('article.card'), (n) => n >= 1);
  assert.ok(cards >= 1, 'the App shows at least one article.card');
  const next = app.locator('button[data-page="next"]');
  assert.equal(await next.isDisabled(), false, `Next page is disabled: $HOST_CASES.${tool} must match more than one page`);
  const mark = server.log.rpc.length;
  await next.click();
  // The chip, exactly: page 1's summary says "more on page 2", and a
  // substring match would pass before the App has asked for anything.
  const page2 = await app
    .locator('.banner .chip', { hasText: /^Page 2$/ })
    .waitFor()
    .then(() => null, (e) => e.message.split('\n')[0]);
  const calls = JSON.stringify(callsSince(mark));
  assert.equal(page2, null, `the banner never said "Page 2" after Next page; tools/call since: ${calls}`);
  assert.ok(
    callsSince(mark).some((c) => c.name === tool && c.arguments?.page === 2),
    `the App asks for page 2 as tools/call ${tool} with page: 2; the gateway got ${calls}`,
  );
}

async function discoverConnections({ app, shown, tool }) {
  const found = shown.structuredContent?.connectionsFound;
  assert.ok(Number.isInteger(found) && found >= 1, `$HOST_CASES.${tool} must find connections; connectionsFound is ${found}`);
  const count = await settled(app.locator('article.connection'), (n) => n === found);
  assert.equal(count, found, 'one article.connection per connection found');
  // Each card offers what the discovery cards do (issue 72).
  const buttons = await app.locator('article.connection').first().locator('.actions button').allTextContents();
  assert.deepEqual(buttons, ['Connect', 'Save'], 'a connection card has Connect and Save');
  assert.equal(await app.locator('article.connection [data-action=connect]:disabled').count(), 0, 'enabled in a host');
}

async function extractIntent({ app, shown, tool }) {
  const intents = shown.structuredContent?.intents;
  assert.ok(Array.isArray(intents) && intents.length >= 1, `$HOST_CASES.${tool} must extract intents; intents is ${JSON.stringify(intents)}`);
  const count = await settled(app.locator('li.intent'), (n) => n === intents.length);
  assert.equal(count, intents.length, 'one li.intent per intent');
  // The person removes them, one by one (issue 72): archive_intent, by the
  // name the host listed, then gone from the App.
  const archive = tool.replace(/extract_intent$/, 'archive_intent');
  const mark = server.log.rpc.length;
  for (let left = intents.length; left > 0; left--) {
    await app.locator('li.intent [data-remove]').first().click();
    assert.equal(await settled(app.locator('li.intent'), (n) => n === left - 1), left - 1, 'one intent fewer');
  }
  assert.equal(await app.locator('.empty').textContent(), 'All intents removed.');
  assert.deepEqual(
    callsSince(mark).map((c) => [c.name, c.arguments]),
    intents.map(({ id }) => [archive, { intentId: id }]),
  );
}

/**
 * No errors in any frame, no request but the App's avatars left the test
 * server, every request to the gateway carried the token, and no tool was
 * called by its server's own name (`discover_filter` for `index__discover_filter`).
 */
function assertClean({ problems, elsewhere }, tool) {
  assert.deepEqual(problems, [], 'no page errors, console errors or CSP violations in the host or the App');
  const unexpected = elsewhere.filter((r) => !(r.fromApp && r.type === 'image'));
  assert.deepEqual(unexpected, [], 'the App made no request but for images, and the host none outside the test server');
  assert.deepEqual(server.log.refused, [], 'nothing asked the test server for anything but the host page and /mcp');
  const unauthorized = server.log.http.filter((r) => r.authorization !== `Bearer ${token}`).map((r) => r.request);
  assert.deepEqual(unauthorized, [], 'every request to the gateway carried the bearer token');
  const bare = tool.slice(tool.indexOf('__') + 2);
  const byServerName = server.log.rpc.filter((r) => r.method === 'tools/call' && r.name === bare);
  assert.deepEqual(byServerName, [], `no tools/call by the server's own name ${bare}`);
}
