// Browser tests of the built Index widgets, each page's self-contained file
// (widgets/dist/<page>.inline.html: index-discover's cards and pager,
// index-connections, intent-display), in Debian's headless Chromium driven by
// playwright-core. Each fixture is rendered through a stub `window.openai`
// (ChatGPT) or a stub MCP Apps host, or both (then both must give the same
// DOM), screenshotted into $WIDGET_ARTIFACTS (default
// target/widget-screenshots), and its DOM compared with
// test/snapshots/<snapshot>.html (UPDATE_SNAPSHOTS=1 rewrites them). The pager
// must call back by the name the host listed, as the gateway's
// `_meta["mcp-gateway/callTool"]` says. $WIDGET_REAL_RESULT, when set, is a
// real discover_filter result (tests/suite/widget.rs makes one) to render too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { props, card, connections, intents, GATEWAY_INPUT } from './fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** A built page's self-contained file, as the gateway serves it. */
const built = (name) => readFileSync(join(here, '..', 'dist', `${name}.inline.html`), 'utf8');
const html = built('index-discover');
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

/** What a stub host's callTool answers by default: another page of three, numbered as asked. */
const anotherPage = (args) => props(3, { page: (args.arguments || args).page, hasNext: true, hasPrev: true });

/** A tool's refusal, which a stub host's `next` may answer with: then the whole result. */
const refusal = (text) => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * Renders `output` through a stub `window.openai` whose toolResponseMetadata
 * is `meta`; callTool answers with `next(args)`, its result's `_meta` being `callMeta`.
 */
async function openai(output, { input = null, next = anotherPage, meta = null, callMeta = null, widget = html } = {}) {
  const { page, requests, errors, show } = await newPage();
  const calls = [];
  await page.exposeFunction('__recordCall', (name, args) => {
    calls.push({ name, args });
    return next(args);
  });
  await page.addInitScript(({ output, input, meta, callMeta }) => {
    window.openai = {
      toolOutput: output,
      toolInput: input,
      toolResponseMetadata: meta,
      callTool: async (name, args) => {
        const answer = await window.__recordCall(name, args);
        return answer && answer.isError ? answer : { structuredContent: answer, _meta: callMeta };
      },
      sendFollowUpMessage: async ({ prompt }) => {
        window.__said = prompt;
      },
    };
  }, { output, input, meta, callMeta });
  await show(widget);
  return { page, calls, requests, errors };
}

/** The DOM under #root with volatile whitespace removed, for snapshots. */
async function dom(frame) {
  const markup = await frame.$eval('#root', (root) => root.innerHTML);
  return markup.replace(/>\s+</g, '><').replace(/></g, '>\n<') + '\n';
}

/** Screenshots `page` as `name`, and checks the App's DOM in `frame` against the `snapshot` (both hosts share one). */
async function shoot(page, name, frame = page, snapshot = name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  const actual = await dom(frame);
  const file = join(snapshots, `${snapshot}.html`);
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(file)) {
    if (process.env.CI && !existsSync(file)) assert.fail(`no DOM snapshot for ${snapshot}; run UPDATE_SNAPSHOTS=1 npm test in widgets/`);
    mkdirSync(snapshots, { recursive: true });
    writeFileSync(file, actual);
  } else {
    assert.equal(actual, readFileSync(file, 'utf8'), `the DOM of ${name} is not ${snapshot}.html (UPDATE_SNAPSHOTS=1 accepts it)`);
  }
}

/** Waits until `read()` gives `wanted` (a host's message arrives a moment after the click). */
async function waitFor(read, wanted) {
  for (let i = 0; i < 50 && (await read()) !== wanted; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await read(), wanted);
}

async function texts(frame, selector) {
  return frame.$$eval(selector, (nodes) => nodes.map((n) => n.textContent.trim()));
}

async function disabled(frame, selector) {
  return frame.$eval(selector, (b) => b.disabled);
}

/** Waits for the banner's page chip to read `label` exactly (the summary may name other pages). */
async function pageChip(page, label) {
  await page.waitForFunction((l) => [...document.querySelectorAll('.banner .chip')].some((c) => c.textContent === l), label);
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
  await pageChip(page, 'Page 2');
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
  await pageChip(page, 'Page 1');
  assert.deepEqual(calls[0], { name: 'discover_filter', args: { ...args, page: 1 } });
  await page.click('[data-page=next]');
  await pageChip(page, 'Page 2');
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

/**
 * Renders `widget` in an iframe of a stub MCP Apps host, which answers
 * ui/initialize with `hostContext`, sends `input` and the result (`first`,
 * with `meta` as its `_meta`), and answers each tools/call with `next(args)`,
 * its result's `_meta` being `callMeta`. Resolves once the App shows the result.
 */
async function mcpAppsHost(widget, { first, input = { intentIds: ['i-1'], limit: 3 }, meta = undefined, callMeta = undefined, next = anotherPage, hostContext = {} }) {
  const { page, requests, errors, show } = await newPage();
  await page.exposeFunction('__answer', (args) => next(args));
  await show('<!doctype html><html><body><iframe id="app" style="width:700px;height:860px;border:0"></iframe></body></html>');
  await page.evaluate(({ widget, first, input, meta, callMeta, hostContext }) => {
    window.log = [];
    window.called = [];
    const frame = document.getElementById('app');
    const send = (m) => frame.contentWindow.postMessage(m, '*');
    window.addEventListener('message', async (e) => {
      const m = e.data;
      window.log.push(m.method || 'response');
      if (m.method === 'ui/initialize') {
        send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'stub', version: '1' }, hostCapabilities: {}, hostContext } });
      } else if (m.method === 'ui/notifications/initialized') {
        send({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: input } });
        send({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [], structuredContent: first, _meta: meta } });
      } else if (m.method === 'ui/message') {
        window.said = m.params.content[0].text;
        send({ jsonrpc: '2.0', id: m.id, result: {} });
      } else if (m.method === 'tools/call') {
        window.called.push({ name: m.params.name, args: m.params.arguments });
        const answer = await window.__answer(m.params.arguments);
        const result = answer && answer.isError ? answer : { content: [], structuredContent: answer, _meta: callMeta };
        send({ jsonrpc: '2.0', id: m.id, result });
      }
    });
    frame.srcdoc = widget;
  }, { widget, first, input, meta, callMeta, hostContext });
  await page.frameLocator('#app').locator('#root .banner').waitFor();
  const frame = await (await page.$('#app')).contentFrame();
  return { page, frame, requests, errors, calls: () => page.evaluate(() => window.called), said: () => page.evaluate(() => window.said) };
}

/** Both stub hosts, each rendering `widget` with `output` as `{ page, frame, calls(), said(), requests, errors }`. */
const HOSTS = {
  openai: async (widget, output, options = {}) => {
    const r = await openai(output, { ...options, widget });
    return { ...r, frame: r.page, calls: async () => r.calls, said: () => r.page.evaluate(() => window.__said) };
  },
  'mcp-apps': (widget, output, options = {}) => mcpAppsHost(widget, { ...options, first: output }),
};

/** Presses Next page in `frame` and waits for page `n`. */
async function nextPage(frame, n) {
  await frame.click('[data-page=next]');
  await frame.waitForFunction((n) => document.querySelector('.banner')?.textContent.includes(`Page ${n}`), n);
}

test('MCP Apps host: ui/initialize, tool-result, tools/call for the next page', async () => {
  const app = await mcpAppsHost(html, { first: props(3, { page: 1, hasNext: true, hasPrev: false }) });
  await shoot(app.page, 'mcp-apps-host', app.frame);
  await nextPage(app.frame, 2);
  const [called] = await app.calls();
  assert.equal(called.name, 'discover_filter', 'with nothing to say otherwise, the tool by its own name');
  assert.equal(called.args.page, 2);
  const log = await app.page.evaluate(() => window.log);
  assert.ok(log.includes('ui/notifications/size-changed'), `the app reports its size: ${log}`);
  assert.deepEqual(app.errors, []);
  await app.page.close();
});

/** The gateway's word, in a result's `_meta`, on how the host knows the tool. */
const LISTED = { 'mcp-gateway/callTool': { name: 'index__discover_filter' } };
const BY_KEY = { 'mcp-gateway/callTool': { name: 'tool_execute', toolKey: 'index:discover_filter' } };

/** Page `n` without ready-made page arguments, so that the pager builds them from the call's own. */
function bare(n) {
  const p = props(3, { page: n, hasNext: true, hasPrev: n > 1 });
  p.pageHint.nextArguments = p.pageHint.prevArguments = null;
  return p;
}

for (const [host, render] of Object.entries(HOSTS)) {
  test(`${host}: the pager calls back as the latest result's _meta says, with the call's own arguments`, async () => {
    // tool_execute's arguments came as a JSON string; the host's toolInfo, a
    // fallback, names another tool.
    const args = { intentIds: ['i-9'], limit: 2 };
    const app = await render(html, bare(1), {
      input: { toolKey: 'index:discover_filter', arguments: JSON.stringify({ ...args, page: 1 }) },
      meta: LISTED,
      callMeta: BY_KEY,
      next: (a) => bare((a.arguments || a).page),
      hostContext: { toolInfo: { tool: { name: 'something_else' } } },
    });
    await nextPage(app.frame, 2);
    await nextPage(app.frame, 3);
    assert.deepEqual(await app.calls(), [
      { name: 'index__discover_filter', args: { ...args, page: 2 } },
      { name: 'tool_execute', args: { toolKey: 'index:discover_filter', arguments: { ...args, page: 3 } } },
    ]);
    assert.deepEqual(app.errors, []);
    await app.page.close();
  });
}

test("MCP Apps without the gateway's word: the name the host listed, with the key when that is tool_execute", async () => {
  const args = { intentIds: ['i-1'], limit: 3 };
  const key = 'index:discover_filter';
  const cases = [
    ['index__discover_filter', args, { name: 'index__discover_filter', args: { ...args, page: 2 } }],
    ['tool_execute', { toolKey: key, arguments: args }, { name: 'tool_execute', args: { toolKey: key, arguments: { ...args, page: 2 } } }],
  ];
  for (const [name, input, call] of cases) {
    const app = await mcpAppsHost(html, { first: bare(1), input, hostContext: { toolInfo: { tool: { name } } } });
    await nextPage(app.frame, 2);
    assert.deepEqual(await app.calls(), [call]);
    await app.page.close();
  }
});

test('openai:set_globals takes only the globals it names: a theme change keeps the page and the latest _meta', async () => {
  const { page, calls } = await openai(props(3, { page: 1, hasNext: true, hasPrev: false }), { input: GATEWAY_INPUT, meta: LISTED, callMeta: BY_KEY });
  const set = (globals) =>
    page.evaluate((globals) => {
      Object.assign(window.openai, globals);
      window.dispatchEvent(new CustomEvent('openai:set_globals', { detail: { globals } }));
    }, globals);
  await nextPage(page, 2);
  await set({ theme: 'dark' });
  await nextPage(page, 3);
  await set({ toolResponseMetadata: LISTED });
  await nextPage(page, 4);
  assert.deepEqual(calls.map((c) => [c.name, (c.args.arguments || c.args).page]), [
    ['index__discover_filter', 2],
    ['tool_execute', 3],
    ['index__discover_filter', 4],
  ]);
  await page.close();
});

/** Renders `output` on the built page `name` in both stub hosts, runs `check(app)` in each, and matches one `snapshot`. */
async function inBothHosts(name, output, snapshot, check) {
  for (const [host, render] of Object.entries(HOSTS)) {
    const app = await render(built(name), output);
    await check(app);
    await shoot(app.page, `${snapshot}-${host}`, app.frame, snapshot);
    assert.deepEqual(app.errors, [], host);
    await app.page.close();
  }
}

test('connections: one card per person, with what could happen and the shared intents, and an empty state', async () => {
  await inBothHosts('index-connections', connections(3), 'connections', async ({ frame, requests }) => {
    assert.deepEqual(await texts(frame, 'article.connection .name'), ['Ada Lovelace', 'Grace Hopper', 'Alan Turing']);
    assert.deepEqual(await frame.$$eval('article.connection', (a) => a.map((n) => n.dataset.userId)), ['u-0', 'u-1', 'u-2']);
    assert.deepEqual(await texts(frame, 'article.connection:first-child .subtitle'), ['Mathematician; writes about engines']);
    assert.deepEqual(await texts(frame, 'article.connection:first-child .badge'), ['1 mutual intent']);
    assert.deepEqual(await texts(frame, 'article.connection:nth-child(2) .intents li'), ['Analytical engines', 'Poetry of science']);
    assert.deepEqual(await texts(frame, 'article.connection:nth-child(3) .vibe.missing'), ['VibeCheck summary unavailable.']);
    assert.deepEqual(await texts(frame, '.banner .chip'), ['3 connections', '2 intents extracted']);
    assert.deepEqual(await texts(frame, '.banner .summary'), ['Found 3 connections']);
    assert.equal(await frame.$eval('article.connection .vibe a', (a) => a.href), 'https://index.network/intents/i-1');
    assert.deepEqual(await texts(frame, 'article.connection .avatar'), ['AL', 'GH', 'AT']);
    assert.deepEqual(requests, []);
  });
});

test('connections: each card has Connect and Save, which ask the model for that person', async () => {
  await inBothHosts('index-connections', connections(3), 'connections', async ({ frame, said }) => {
    assert.deepEqual(await texts(frame, 'article.connection:first-child .actions button'), ['Connect', 'Save']);
    await frame.click('article.connection:nth-child(2) [data-action=connect]');
    await waitFor(said, 'Connect me with Grace Hopper.');
    await frame.click('article.connection:nth-child(3) [data-action=save]');
    await waitFor(said, 'Save Alan Turing for later.');
  });
  await inBothHosts('index-connections', connections(0), 'no-connections', async ({ frame }) => {
    assert.deepEqual(await texts(frame, '.empty'), ['No connections found.']);
  });
});

test('connections: hostile text stays text, and an avatar that fails to load leaves initials', async () => {
  const output = connections(2);
  const evil = '<img src=x onerror="window.__pwned=1">Mallory';
  output.connections[0].user.name = evil;
  output.connections[0].user.intro = '<script>window.__pwned=1</script>';
  output.connections[0].user.avatar = 'javascript:window.__pwned=1';
  output.connections[0].synthesis = 'See [this](javascript:window.__pwned=1) or [that](https://index.network/x)';
  output.connections[0].matchedIntents[0].summary = '<b>bold</b>';
  output.connections[1].user.avatar = 'https://avatars.example/grace.png';
  await inBothHosts('index-connections', output, 'connections-hostile', async ({ frame, requests }) => {
    await frame.waitForFunction(() => !document.querySelector('.avatar img'));
    assert.equal(await frame.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(await texts(frame, 'article.connection .name'), [evil, 'Grace Hopper']);
    assert.deepEqual(await texts(frame, 'article.connection:nth-child(2) .avatar'), ['GH']);
    assert.deepEqual(await texts(frame, 'article.connection:first-child .intents li'), ['<b>bold</b>']);
    assert.deepEqual(await frame.$$eval('article.connection:first-child .vibe a', (a) => a.map((n) => n.href)), ['https://index.network/x']);
    assert.equal(await frame.$$eval('#root img, #root script, #root b', (n) => n.length), 0);
    assert.deepEqual(requests, ['https://avatars.example/grace.png'], 'only the https avatar was asked for');
  });
});

test('intent display: each intent with its date, and an empty state', async () => {
  await inBothHosts('intent-display', intents(3), 'intents', async ({ frame, requests }) => {
    assert.deepEqual(await texts(frame, 'li.intent .intent-text'), [
      'Looking for a co-founder in Berlin',
      "Offering mentorship in distributed systems, in the user's words",
      'Learning Rust',
    ]);
    assert.deepEqual(await texts(frame, 'li.intent time'), ['2026-11-20', '2026-11-21', '2026-11-22']);
    assert.deepEqual(await frame.$$eval('li.intent', (l) => l.map((n) => n.dataset.intentId)), ['i-1', 'i-2', 'i-3']);
    assert.deepEqual(await texts(frame, '.banner .chip'), ['3 intents', '1 link processed']);
    assert.deepEqual(requests, []);
  });
  await inBothHosts('intent-display', intents(0), 'no-intents', async ({ frame }) => {
    assert.deepEqual(await texts(frame, '.empty'), ['No intents detected.']);
    assert.deepEqual(await texts(frame, '.banner .chip'), ['0 intents']);
  });
});

/** The gateway's word on how the host knows extract_intent. */
const LISTED_EXTRACT = { 'mcp-gateway/callTool': { name: 'index__extract_intent' } };

for (const [host, render] of Object.entries(HOSTS)) {
  test(`${host}: the intent display removes intents through archive_intent, by its listed name, then "All intents removed."`, async () => {
    let refuse = true;
    const next = (args) => (refuse && args.intentId === 'i-2' ? refusal('Archive intent failed (404): Intent not found') : { archived: args.intentId });
    const app = await render(built('intent-display'), intents(3), { input: { fullInputText: 'x' }, meta: LISTED_EXTRACT, next });
    const { frame } = app;
    await frame.click('li.intent[data-intent-id="i-1"] [data-remove]');
    await frame.waitForFunction(() => !document.querySelector('li.intent[data-intent-id="i-1"]'));
    assert.deepEqual(await texts(frame, '.banner .chip'), ['2 intents', '1 removed', '1 link processed']);
    // A refusal keeps the intent and says why.
    await frame.click('li.intent[data-intent-id="i-2"] [data-remove]');
    await frame.waitForSelector('[role=alert]');
    assert.deepEqual(await texts(frame, '[role=alert]'), ['Could not remove the intent: Archive intent failed (404): Intent not found']);
    assert.equal(await frame.$$eval('li.intent', (l) => l.length), 2);
    refuse = false;
    for (const id of ['i-2', 'i-3']) {
      await frame.click(`li.intent[data-intent-id="${id}"] [data-remove]`);
      await frame.waitForFunction((id) => !document.querySelector(`li.intent[data-intent-id="${id}"]`), id);
    }
    assert.deepEqual(await texts(frame, '.empty'), ['All intents removed.']);
    assert.deepEqual(await texts(frame, '[role=alert]'), [], 'the refusal is gone once a removal works');
    assert.deepEqual(
      (await app.calls()).map((c) => [c.name, c.args]),
      ['i-1', 'i-2', 'i-2', 'i-3'].map((id) => ['index__archive_intent', { intentId: id }]),
    );
    assert.deepEqual(app.requests, [], 'removing goes through the host alone');
    await shoot(app.page, `intents-removed-${host}`, frame, 'intents-removed');
    assert.deepEqual(app.errors, []);
    await app.page.close();
  });
}

test('intent display through tool_execute: no Remove, since a tool for the App alone runs only by its listed name', async () => {
  const meta = { 'mcp-gateway/callTool': { name: 'tool_execute', toolKey: 'index:extract_intent' } };
  const { page } = await openai(intents(2), { meta, widget: built('intent-display') });
  assert.equal(await page.$$eval('li.intent', (l) => l.length), 2);
  assert.equal(await page.$$eval('[data-remove]', (b) => b.length), 0);
  await page.close();
});

test('intent display: hostile text stays text', async () => {
  const output = intents(2);
  const id = '"><script>window.__pwned=1</script>';
  output.intents[0].summary = '<img src=x onerror="window.__pwned=1">';
  output.intents[1].payload = '<script>window.__pwned=1</script>';
  output.intents[1].id = id;
  await inBothHosts('intent-display', output, 'intents-hostile', async ({ frame, requests }) => {
    assert.equal(await frame.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(await texts(frame, 'li.intent .intent-text'), [output.intents[0].summary, output.intents[1].payload]);
    assert.deepEqual(await frame.$$eval('li.intent', (l) => l.map((n) => n.dataset.intentId)), ['i-1', id]);
    assert.equal(await frame.$$eval('#root img, #root script', (n) => n.length), 0);
    assert.deepEqual(requests, []);
  });
});

test('no host: a plain readable list from the data the page carries, or a note', async () => {
  const { page, show } = await newPage();
  const cases = [
    ['index-discover', props(2, { page: 1, hasNext: false, hasPrev: false }), 'no-host', 'No discovery results to show.'],
    ['index-connections', connections(2), 'no-host-connections', 'No connections to show.'],
    ['intent-display', intents(2), 'no-host-intents', 'No intents to show.'],
  ];
  for (const [name, output, snapshot, note] of cases) {
    const widget = built(name);
    const data = JSON.stringify(output).replace(/</g, '\\u003c');
    await show(widget.replace('<script>', `<script type="application/json" id="widget-data">${data}</script>\n<script>`));
    assert.equal(await page.$$eval('ol.plain li', (l) => l.length), 2, name);
    assert.equal(await page.$$eval('button', (b) => b.length), 0, name);
    await shoot(page, snapshot);
    await show(widget);
    assert.deepEqual(await texts(page, '.status'), [note], name);
  }
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
