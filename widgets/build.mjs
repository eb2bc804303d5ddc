#!/usr/bin/env node
// Builds the pages the gateway embeds (no dependencies, reproducible):
//   widgets/src/index -> widgets/dist: the Index widgets, one script and one
//   stylesheet shared by three pages (index-discover, index-connections,
//   intent-display), each picking its view with <main data-view>
//     index-widgets.<hash>.css / .js    fingerprinted assets (served under /widgets/, immutable)
//     <page>.html                       each page's template, linking them
//     <page>.inline.html                each page as one self-contained file: its MCP resource
//   widgets/src/console -> widgets/dist/console
//     console.<hash>.css / .js          fingerprinted assets (served under /console/assets/)
//     console.html                      the operator console's page, linking them
//                                       (no inline variant: its CSP allows no inline code)
// `node widgets/build.mjs --check` fails when dist is not what the sources build.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, readdirSync, rmSync, mkdirSync, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const apps = [
  {
    src: 'index', dist: 'dist', name: 'index-widgets', css: 'widget.css', js: 'widget.js', inline: true, prefix: '',
    // One page template (page.html), filled in for each view.
    pages: {
      'index-discover': { source: 'page.html', fill: { view: 'discover', title: 'Index Discover', loading: 'Loading discovery cards…' } },
      'index-connections': { source: 'page.html', fill: { view: 'connections', title: 'Index Connections', loading: 'Loading connections…' } },
      'intent-display': { source: 'page.html', fill: { view: 'intents', title: 'Intent Display', loading: 'Loading intents…' } },
    },
  },
  { src: 'console', dist: join('dist', 'console'), name: 'console', css: 'console.css', js: 'console.js', inline: false, prefix: '/console/assets/', pages: { console: { source: 'index.html', fill: {} } } },
];

const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 10);

/** The files one app builds to: name -> text. */
function outputs(app) {
  const read = (f) => readFileSync(join(here, 'src', app.src, f), 'utf8');
  const css = read(app.css);
  const js = read(app.js);
  if (/<\/(script|style)/i.test(js + css)) throw new Error(`a closing </script> or </style> inside ${app.src} would break inlining`);
  const cssFile = `${app.name}.${hash(css)}.css`;
  const jsFile = `${app.name}.${hash(js)}.js`;
  const link = `<link rel="stylesheet" href="${app.css}">`;
  const script = `<script src="${app.js}"></script>`;
  const out = { [cssFile]: css, [jsFile]: js };
  for (const [page, { source, fill }] of Object.entries(app.pages)) {
    const html = read(source).replace(/\{\{(\w+)\}\}/g, (_, key) => {
      if (!(key in fill)) throw new Error(`${app.src}/${source} asks for {{${key}}}, which ${page} does not fill`);
      return fill[key];
    });
    if (!html.includes(link) || !html.includes(script)) throw new Error(`${app.src}/${source} must link ${app.css} and ${app.js}`);
    out[`${page}.html`] = html
      .replace(link, `<link rel="stylesheet" href="${app.prefix}${cssFile}">`)
      .replace(script, `<script src="${app.prefix}${jsFile}"></script>`);
    if (app.inline) {
      out[`${page}.inline.html`] = html.replace(link, () => `<style>\n${css}</style>`).replace(script, () => `<script>\n${js}</script>`);
    }
  }
  return out;
}

/** Whether a file in the app's dist is one it builds (or built before). */
const owns = (app, f) => [app.name, ...Object.keys(app.pages)].some((prefix) => f.startsWith(`${prefix}.`));

const files = (dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile()) : []);

if (process.argv.includes('--check')) {
  const problems = [];
  for (const app of apps) {
    const dist = join(here, app.dist);
    const want = outputs(app);
    const present = files(dist).filter((f) => owns(app, f));
    problems.push(...present.filter((f) => !(f in want)).map((f) => join(app.dist, f)));
    problems.push(
      ...Object.entries(want)
        .filter(([f, text]) => !existsSync(join(dist, f)) || readFileSync(join(dist, f), 'utf8') !== text)
        .map(([f]) => join(app.dist, f)),
    );
  }
  if (problems.length) {
    console.error(`widgets/dist is out of date (${problems.join(', ')}); run: node widgets/build.mjs`);
    process.exit(1);
  }
  console.log('widgets/dist is up to date');
} else {
  for (const app of apps) {
    const dist = join(here, app.dist);
    const want = outputs(app);
    mkdirSync(dist, { recursive: true });
    for (const f of files(dist)) if (owns(app, f) && !(f in want)) rmSync(join(dist, f));
    for (const [f, text] of Object.entries(want)) writeFileSync(join(dist, f), text);
    const bytes = Object.values(want).reduce((n, text) => n + Buffer.byteLength(text), 0);
    console.log(`built ${app.dist}: ${Object.keys(want).join(', ')} (${bytes} bytes)`);
  }
}
