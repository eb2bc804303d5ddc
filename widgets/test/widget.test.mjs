// Browser tests of the built widget (widgets/dist/index-discover.inline.html)
// in Debian's headless Chromium, driven by playwright-core. Each fixture is
// rendered through a stub `window.openai` (ChatGPT) or a stub MCP Apps host,
// screenshotted into $WIDGET_ARTIFACTS (default target/widget-screenshots),
// and its DOM compared with test/snapshots/<fixture>.html
// (UPDATE_SNAPSHOTS=1 rewrites them). $WIDGET_REAL_RESULT, when set, is a
// real discover_filter result (tests/widget.rs makes one) to render too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { props, card, GATEWAY_INPUT } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const html = readFileSync(join(here, '..', 'dist', 'index-discover.inline.html'), 'utf8');
const artifacts = resolve(process.env.WIDGET_ARTIFACTS || join(here, '..', '..', 'target', 'widget-screenshots'));
const snapshots = join(here, 'snapshots');
mkdirSync(artifacts, { recursive: true });

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
let browser;
before(async () => {
  assert.ok(existsSync(executablePath), `no Chromium at ${executablePath}: apt-get install chromium (or set CHROMIUM)`);
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => {
  await browser?.close();
});

/** Where a test page is served from (by the route below, not a server). */
const ORIGIN = 'http://widget.test/';

/** A page that `show(content)` loads; every other request is refused and recorded. */
async function newPage() {
  const page = await browser.newPage({ viewport: { width: 720, height: 900 } });
  const requests = [];
  let served = '';
  await page.route('**/*', (route) => {
    if (route.request().url() === ORIGIN) return route.fulfill({ contentType: 'text/html', body: served });
    requests.push(route.request().url());
    return route.abort();
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const show = async (content) => {
    served = content;
    await page.goto(ORIGIN);
  };
  return { page, requests, errors, show };
}

/** Renders `output` through a stub `window.openai`; `callTool` answers with `next(args)`. */
async function openai(output, { input = null, next = null } = {}) {
  const { page, requests, errors, show } = await newPage();
  const calls = [];
  // By default another page of three comes back, numbered as asked.
  const answer = next || ((args) => props(3, { page: (args.arguments || args).page, hasNext: true, hasPrev: true }));
  await page.exposeFunction('__recordCall', (name, args) => {
    calls.push({ name, args });
    return answer(args);
  });
  await page.addInitScript(({ output, input }) => {
    window.openai = {
      toolOutput: output,
      toolInput: input,
      callTool: async (name, args) => ({ structuredContent: await window.__recordCall(name, args) }),
      sendFollowUpMessage: async ({ prompt }) => {
        window.__said = prompt;
      },
    };
  }, { output, input });
  await show(html);
  return { page, calls, requests, errors };
}

/** The DOM under #root with volatile whitespace removed, for snapshots. */
async function dom(frame) {
  const markup = await frame.$eval('#root', (root) => root.innerHTML);
  return markup.replace(/>\s+</g, '><').replace(/></g, '>\n<') + '\n';
}

async function shoot(page, name, frame = page) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  const actual = await dom(frame);
  const file = join(snapshots, `${name}.html`);
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(file)) {
    if (process.env.CI && !existsSync(file)) assert.fail(`no DOM snapshot for ${name}; run UPDATE_SNAPSHOTS=1 npm test in widgets/`);
    mkdirSync(snapshots, { recursive: true });
    writeFileSync(file, actual);
  } else {
    assert.equal(actual, readFileSync(file, 'utf8'), `the DOM of ${name} changed (UPDATE_SNAPSHOTS=1 accepts it)`);
  }
}

async function texts(frame, selector) {
  return frame.$$eval(selector, (nodes) => nodes.map((n) => n.textContent.trim()));
}

async function disabled(frame, selector) {
  return frame.$eval(selector, (b) => b.disabled);
}

test('three cards on the first page: header, badges, VibeCheck links, stats and actions', async () => {
  const output = props(3, { page: 1, hasNext: true, hasPrev: false });
  const { page, calls, requests, errors } = await openai(output, { input: GATEWAY_INPUT });
  assert.deepEqual(await texts(page, '.card .name'), ['Ada Lovelace', 'Grace Hopper', 'Alan Turing']);
  assert.deepEqual(await texts(page, '.card:first-child .badge'), ['2 intents']);
  assert.deepEqual(await texts(page, '.card:first-child .avatar'), ['AL']);
  assert.deepEqual(await texts(page, '.banner .chip'), ['3 matches', 'Page 1']);
  const link = await page.$eval('.card:first-child .vibe a', (a) => ({ href: a.href, text: a.textContent, rel: a.rel }));
  assert.deepEqual(link, { href: 'https://index.network/intents/i-1', text: 'build engines', rel: 'noopener noreferrer' });
  assert.deepEqual(await texts(page, '.card:first-child .stats div'), ['Shared intents:2', 'Total stake:12.5']);
  assert.deepEqual(await texts(page, '.card:first-child .intents li'), ['Analytical engines', 'Poetry of science']);
  assert.equal(await disabled(page, '[data-page=prev]'), true);
  assert.equal(await disabled(page, '[data-page=next]'), false);
  await shoot(page, 'three-cards');

  // Next page goes through the gateway exactly as the call came: tool_execute, same toolKey, page + 1.
  await page.click('[data-page=next]');
  await page.waitForFunction(() => document.querySelector('.banner')?.textContent.includes('Page 2'));
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'tool_execute');
  assert.equal(calls[0].args.toolKey, 'index:discover_filter');
  assert.equal(calls[0].args.arguments.page, 2);
  assert.deepEqual(calls[0].args.arguments.intentIds, ['i-1', 'i-2']);

  await page.click('.card:first-child [data-action=connect]');
  assert.equal(await page.evaluate(() => window.__said), 'Connect me with Ada Lovelace.');
  assert.deepEqual(requests, [], 'the widget made no requests');
  assert.deepEqual(errors, []);
  await page.close();
});

test('no matches: a clear empty state and no page buttons to press', async () => {
  const { page, errors } = await openai(props(0, { page: 1, hasNext: false, hasPrev: false }));
  assert.equal(await page.$$eval('.card', (c) => c.length), 0);
  assert.deepEqual(await texts(page, '.empty'), ['No matches found.']);
  assert.equal(await disabled(page, '[data-page=next]'), true);
  assert.equal(await disabled(page, '[data-page=prev]'), true);
  await shoot(page, 'no-matches');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a failed VibeCheck is a badge on its card, not an error', async () => {
  const output = props(2, { page: 1, hasNext: false, hasPrev: false });
  output.cards[1] = card(1, { failed: true });
  const { page } = await openai(output);
  assert.deepEqual(await texts(page, '.card:nth-child(2) .badge.warn'), ['VibeCheck unavailable']);
  assert.deepEqual(await texts(page, '.card:nth-child(2) .vibe.missing'), ['VibeCheck summary unavailable.']);
  assert.equal(await page.$$eval('.card:first-child .badge.warn', (b) => b.length), 0);
  await shoot(page, 'failed-vibecheck');
  await page.close();
});

test('hostile text is shown as text: no markup, no script, no javascript: links', async () => {
  const output = props(1, { page: 1, hasNext: false, hasPrev: false });
  const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>Mallory';
  output.cards[0].header.title = evil;
  output.cards[0].header.subtitle = '<b>bold</b> & "quoted"';
  output.cards[0].body.vibecheck = 'Try [this](javascript:window.__pwned=1) or <iframe src=x></iframe>';
  output.summary = '<svg onload="window.__pwned=1">';
  const { page, requests, errors } = await openai(output);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(await texts(page, '.card .name'), [evil]);
  assert.equal(await page.$$eval('#root img, #root script, #root iframe, #root svg, #root b', (n) => n.length), 0);
  assert.equal(await page.$$eval('.vibe a', (a) => a.length), 0, 'a javascript: link is not a link');
  assert.match(await page.$eval('.vibe', (p) => p.textContent), /Try this or <iframe src=x><\/iframe>/);
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await shoot(page, 'hostile-text');
  await page.close();
});

test('middle page: both page buttons work, and ask for page - 1 and page + 1', async () => {
  const args = { intentIds: ['i-1', 'i-2'], limit: 3 };
  const output = props(3, { page: 2, hasNext: true, hasPrev: true });
  const { page, calls } = await openai(output, {
    input: { ...args, page: 2 },
    next: (a) => props(3, { page: a.page, hasNext: true, hasPrev: a.page > 1 }),
  });
  assert.equal(await disabled(page, '[data-page=prev]'), false);
  assert.equal(await disabled(page, '[data-page=next]'), false);
  await shoot(page, 'middle-page');
  await page.click('[data-page=prev]');
  await page.waitForFunction(() => document.querySelector('.banner')?.textContent.includes('Page 1'));
  assert.deepEqual(calls[0], { name: 'discover_filter', args: { ...args, page: 1 } });
  await page.click('[data-page=next]');
  await page.waitForFunction(() => document.querySelector('.banner')?.textContent.includes('Page 2'));
  assert.equal(calls[1].args.page, 2);
  await page.close();
});

test('last page: Next page is disabled', async () => {
  const { page, calls } = await openai(props(2, { page: 3, hasNext: false, hasPrev: true }));
  assert.equal(await disabled(page, '[data-page=next]'), true);
  assert.equal(await disabled(page, '[data-page=prev]'), false);
  await page.click('[data-page=next]', { force: true });
  assert.equal(calls.length, 0);
  await shoot(page, 'last-page');
  await page.close();
});

test('toolOutput nested under result.structuredContent, and updates on openai:set_globals', async () => {
  const { page } = await openai({ result: { structuredContent: props(1, { page: 1, hasNext: false, hasPrev: false }) } });
  assert.equal(await page.$$eval('.card', (c) => c.length), 1);
  await page.evaluate((next) => {
    window.openai.toolOutput = next;
    window.dispatchEvent(new CustomEvent('openai:set_globals', { detail: { globals: { toolOutput: next } } }));
  }, props(3, { page: 1, hasNext: false, hasPrev: false }));
  assert.equal(await page.$$eval('.card', (c) => c.length), 3);
  await page.close();
});

test('MCP Apps host: ui/initialize, tool-result, tools/call for the next page', async () => {
  const { page, errors, show } = await newPage();
  await show('<!doctype html><html><body><iframe id="app" style="width:700px;height:860px;border:0"></iframe></body></html>');
  await page.evaluate(({ html, first, second }) => {
    window.log = [];
    const frame = document.getElementById('app');
    const send = (m) => frame.contentWindow.postMessage(m, '*');
    window.addEventListener('message', (e) => {
      const m = e.data;
      window.log.push(m.method || 'response');
      if (m.method === 'ui/initialize') {
        send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'stub', version: '1' }, hostCapabilities: {}, hostContext: {} } });
      } else if (m.method === 'ui/notifications/initialized') {
        send({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { intentIds: ['i-1'], limit: 3 } } });
        send({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [], structuredContent: first } });
      } else if (m.method === 'tools/call') {
        window.called = m.params;
        send({ jsonrpc: '2.0', id: m.id, result: { content: [], structuredContent: second } });
      }
    });
    frame.srcdoc = html;
  }, { html, first: props(3, { page: 1, hasNext: true, hasPrev: false }), second: props(2, { page: 2, hasNext: false, hasPrev: true }) });
  const app = page.frameLocator('#app');
  await app.locator('.card').nth(2).waitFor();
  const frame = page.frames().find((f) => f !== page.mainFrame());
  await shoot(page, 'mcp-apps-host', frame);
  await app.locator('[data-page=next]').click();
  await app.locator('.banner', { hasText: 'Page 2' }).waitFor();
  const called = await page.evaluate(() => window.called);
  assert.equal(called.name, 'discover_filter');
  assert.equal(called.arguments.page, 2);
  const log = await page.evaluate(() => window.log);
  assert.ok(log.includes('ui/notifications/size-changed'), `the app reports its size: ${log}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('no host: a plain readable list from the data the page carries, or a note', async () => {
  const { page, show } = await newPage();
  const data = JSON.stringify(props(2, { page: 1, hasNext: false, hasPrev: false })).replace(/</g, '\\u003c');
  await show(html.replace('<script>', `<script type="application/json" id="index-discover-data">${data}</script>\n<script>`));
  assert.equal(await page.$$eval('ol.plain li', (l) => l.length), 2);
  assert.equal(await page.$$eval('button', (b) => b.length), 0);
  await shoot(page, 'no-host');
  await show(html);
  assert.deepEqual(await texts(page, '.status'), ['No discovery results to show.']);
  await page.close();
});

test('a real discover_filter result from the gateway renders every match', { skip: !process.env.WIDGET_REAL_RESULT }, async () => {
  const result = JSON.parse(readFileSync(process.env.WIDGET_REAL_RESULT, 'utf8'));
  const { page, requests, errors } = await openai(result, { input: { toolKey: 'index:discover_filter', arguments: { intentIds: [] } } });
  const names = result.structuredContent.results.map((r) => r.user.name);
  assert.ok(names.length > 0);
  assert.deepEqual(await texts(page, '.card .name'), names);
  assert.equal(await page.$$eval('.card .vibe a', (a) => a.length), names.length, 'each VibeCheck links its intent');
  assert.equal(await disabled(page, '[data-page=next]'), !result.structuredContent.pageHint.hasNext);
  await page.screenshot({ path: join(artifacts, 'real-result.png'), fullPage: true });
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await page.close();
});
