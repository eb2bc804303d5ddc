// The operator console in Debian's headless Chromium, driven by
// playwright-core against a real gateway that tests/suite/console.rs started:
// $CONSOLE_URL (http://127.0.0.1:PORT), $ADMIN_TOKEN, $PROJECT_TOKEN (a
// project token, refused), $HEALTHY / $FAILING (server names), $GRANT_TO
// (a project without grants), $PLAY_PROJECT and $PLAY_QUERY (a playground
// search), $EXECUTED (tool_execute calls the test made) of $EXECUTED_TOOL,
// $SCRIPT_REQUEST (the request id of a script the test ran).
// Screenshots go to $CONSOLE_ARTIFACTS; what the page showed goes to
// $CONSOLE_REPORT (JSON) for the Rust side to check against MCP answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const env = (name) => {
  const v = process.env[name];
  assert.ok(v, `$${name} is set (tests/suite/console.rs runs this file)`);
  return v;
};
const base = env('CONSOLE_URL');
const artifacts = resolve(process.env.CONSOLE_ARTIFACTS || join(here, '..', '..', 'target', 'console-screenshots'));
mkdirSync(artifacts, { recursive: true });
const report = {};

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
let browser;
let page;
const problems = [];

before(async () => {
  assert.ok(existsSync(executablePath), `no Chromium at ${executablePath}: apt-get install chromium (or set CHROMIUM)`);
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await watched(await browser.newContext({ viewport: { width: 1280, height: 900 } }));
});
after(async () => {
  writeFileSync(env('CONSOLE_REPORT'), JSON.stringify(report, null, 2));
  await browser?.close();
});

/** A page whose errors, CSP violations and requests elsewhere are collected. */
async function watched(context) {
  const p = await context.newPage();
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  p.on('console', (m) => m.type() === 'error' && !/status of 40[13]/.test(m.text()) && problems.push(`console: ${m.text()}`));
  p.on('request', (r) => !r.url().startsWith(base) && problems.push(`request elsewhere: ${r.url()}`));
  await p.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective}`)));
  return p;
}

const shot = (p, name) => p.screenshot({ path: join(artifacts, `console-${name}.png`), fullPage: true });

async function signIn(p, token) {
  await p.goto(`${base}/console`);
  await p.fill('#token', token);
  await p.click('#sign-in-form button[type=submit]');
}

test('the page is served with a strict CSP and asks for a credential', async () => {
  const res = await page.goto(`${base}/console`);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  await page.waitForSelector('#sign-in:not([hidden])');
  await shot(page, 'sign-in');
});

test('a project token is refused, by the API and by the sign-in form', async () => {
  const api = await fetch(`${base}/console/api/overview`, { headers: { authorization: `Bearer ${env('PROJECT_TOKEN')}` } });
  assert.equal(api.status, 403);
  assert.equal((await api.json()).error.code, 'NOT_AN_ADMIN');
  assert.equal((await fetch(`${base}/console/api/overview`)).status, 401);
  await signIn(page, env('PROJECT_TOKEN'));
  await page.waitForSelector('#sign-in-error:has-text("project token")');
  assert.ok(await page.isHidden('#nav'));
});

test('servers: the healthy one runs, the failing one shows its error, a row opens its tools', async () => {
  await signIn(page, env('ADMIN_TOKEN'));
  await page.waitForSelector('#nav:not([hidden])');
  const failing = page.locator(`tr[data-server="${env('FAILING')}"]`);
  await failing.locator('.last-error:has-text("failed")').waitFor({ timeout: 15000 });
  assert.equal(await failing.getAttribute('data-status'), 'failed');
  report.failingError = await failing.locator('.last-error').innerText();
  assert.equal(await page.locator(`tr[data-server="${env('HEALTHY')}"]`).getAttribute('data-status'), 'running');
  await page.click(`tr[data-server="${env('FAILING')}"] button.link`);
  await page.waitForSelector('#server-detail pre.stderr');
  report.failingStderr = await page.locator('#server-detail pre.stderr').innerText();
  await page.click(`tr[data-server="${env('HEALTHY')}"] button.link`);
  await page.waitForSelector(`#server-detail[data-server="${env('HEALTHY')}"] #tools-table tr[data-tool]`);
  report.healthyTools = await page.locator('#tools-table tr[data-tool]').evaluateAll((rows) =>
    rows.map((r) => ({ key: r.dataset.tool, state: r.dataset.state, projects: r.querySelector('.projects').innerText })),
  );
  await shot(page, 'servers');
});

test('requests: a script is one request, its calls under it in the order it made them', async () => {
  const id = env('SCRIPT_REQUEST');
  await page.fill('#request-id', id);
  await page.click('#request-form button[type=submit]');
  await page.waitForSelector(`#request-rows[data-request="${id}"] tr[data-request]`);
  report.request = {
    summary: await page.locator('#request-summary').innerText(),
    rows: await page.locator('#request-rows tr[data-request]').evaluateAll((rows) =>
      rows.map((r) => ({ requestId: r.dataset.request, tool: r.children[3].innerText, outcome: r.dataset.outcome })),
    ),
  };
  await shot(page, 'request');
});

test('projects: a grant made on the page is stored', async () => {
  await page.click('a[data-view=projects]');
  const project = env('GRANT_TO');
  await page.click(`tr[data-project="${project}"] button.link`);
  await page.waitForSelector(`#project-detail[data-project="${project}"]`);
  await page.selectOption('#grant-server', env('HEALTHY'));
  await page.selectOption('#grant-tool', '');
  await page.click('#grant-allow');
  await page.waitForSelector(`#grants-table tr[data-grant="${env('HEALTHY')}:*"][data-enabled="true"]`);
  report.granted = { project, server: env('HEALTHY') };
  await shot(page, 'projects');
});

test('tokens: one issued on the page works at /mcp until it is revoked there', async () => {
  // The projects list counts the project's live tokens, and follows what the page does.
  const counted = (n) => page.waitForSelector(`#projects-table tr[data-project="${env('GRANT_TO')}"][data-live-tokens="${n}"]`);
  const live = Number(await page.locator(`#projects-table tr[data-project="${env('GRANT_TO')}"]`).getAttribute('data-live-tokens'));
  await page.fill('#token-label', 'from-console');
  await page.click('#issue-token');
  await counted(live + 1);
  const secret = (await page.locator('#token-secret').innerText()).trim();
  assert.match(secret, /^mgw_\d+_[0-9a-f]{64}$/);
  const id = secret.split('_')[1];
  const initialize = () =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'console-test', version: '1' } } }),
    });
  assert.equal((await initialize()).status, 200, 'the issued token opens /mcp');
  await shot(page, 'token-issued');
  await page.click(`#tokens-table tr[data-token-id="${id}"] button.danger`);
  await page.waitForSelector(`#tokens-table tr[data-token-id="${id}"][data-state="revoked"]`);
  await counted(live);
  assert.equal((await initialize()).status, 401, 'the revoked token is refused');
  report.token = { id: Number(id), secret };
});

test('playground: the project sees what tool_discovery answers it, and hidden matches apart', async () => {
  await page.click('a[data-view=playground]');
  await page.selectOption('#play-project', env('PLAY_PROJECT'));
  await page.fill('#play-query', env('PLAY_QUERY'));
  await page.click('#play-run');
  await page.waitForSelector('#play-list li.result');
  report.playground = await page.locator('#play-list li.result').evaluateAll((items) =>
    items.map((li) => ({ key: li.dataset.key, relevance: Number(li.dataset.relevance), explanation: li.querySelector('.explanation')?.innerText ?? null })),
  );
  report.hidden = await page.locator('#play-hidden li').evaluateAll((items) => items.map((li) => li.dataset.key));
  report.hiddenWhy = await page.locator('#play-hidden li .why-hidden').allInnerTexts();
  report.provider = await page.locator('#play-provider').getAttribute('data-provider');
  await shot(page, 'playground');
});

test('usage: the charts count the calls the test made', async () => {
  await page.click('a[data-view=usage]');
  await page.selectOption('#usage-range', 'hour');
  const chart = page.locator('#calls-chart svg[data-total]');
  await chart.waitFor();
  report.chartTotal = Number(await chart.getAttribute('data-total'));
  const tool = page.locator(`#top-tools g.bar[data-name="${env('EXECUTED_TOOL')}"]`);
  report.toolBar = Number(await tool.getAttribute('data-value'));
  report.failingBars = await page.locator('#top-failing g.bar').evaluateAll((bars) => bars.map((b) => b.dataset.name));
  assert.ok(report.toolBar >= Number(env('EXECUTED')), `the top-tools bar counts ${report.toolBar}`);
  await shot(page, 'usage');
  // One tool alone: its calls over time are every call in the chart.
  await page.click(`#usage-tools tr[data-tool="${env('EXECUTED_TOOL')}"] button.link`);
  await page.waitForSelector('#usage-tool .tag');
  await page.waitForFunction(
    (n) => document.querySelector('#calls-chart svg[data-total]')?.dataset.total === String(n),
    Number(env('EXECUTED')),
  );
  report.toolAlone = await page.locator('#usage-tools tr[data-tool]').evaluateAll((rows) => rows.map((r) => r.dataset.tool));
});

test('the page fits a phone-width screen', async () => {
  const phone = await watched(await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true }));
  await signIn(phone, env('ADMIN_TOKEN'));
  await phone.waitForSelector('#servers-table');
  const servers = await phone.evaluate(() => document.documentElement.scrollWidth);
  // Every column of every server is on the screen, none behind the table's right edge.
  const cut = await phone.evaluate(() =>
    [...document.querySelectorAll('#servers-table td')]
      .filter((td) => td.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
      .map((td) => `${td.closest('tr').dataset.server}: ${td.dataset.label}`));
  await shot(phone, 'phone-servers');
  assert.deepEqual(cut, [], 'no servers-table cell is cut off at phone width');
  await phone.click('a[data-view=usage]');
  await phone.waitForSelector('#calls-chart svg');
  const usage = await phone.evaluate(() => document.documentElement.scrollWidth);
  await shot(phone, 'phone-usage');
  assert.ok(servers <= 390 && usage <= 390, `no sideways scrolling (page widths ${servers}, ${usage})`);
});

test('nothing on the page failed, broke the CSP or went elsewhere', () => {
  assert.deepEqual(problems, []);
});
