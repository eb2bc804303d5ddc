#!/usr/bin/env node
// Builds widgets/src/discover into widgets/dist (no dependencies, reproducible):
//   index-discover.<hash>.css / .js   fingerprinted assets (served under /widgets/, immutable)
//   index-discover.html               the template, linking them
//   index-discover.inline.html        one self-contained file: the MCP resource
// `node widgets/build.mjs --check` fails when dist is not what the sources build.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, readdirSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'src', 'discover');
const dist = join(here, 'dist');
const name = 'index-discover';

const read = (f) => readFileSync(join(src, f), 'utf8');
const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 10);
const html = read('index.html');
const css = read('widget.css');
const js = read('widget.js');
if (/<\/(script|style)/i.test(js + css)) throw new Error('a closing </script> or </style> inside the sources would break inlining');

const cssFile = `${name}.${hash(css)}.css`;
const jsFile = `${name}.${hash(js)}.js`;
const link = '<link rel="stylesheet" href="widget.css">';
const script = '<script src="widget.js"></script>';
if (!html.includes(link) || !html.includes(script)) throw new Error('index.html must link widget.css and widget.js');

const outputs = {
  [cssFile]: css,
  [jsFile]: js,
  [`${name}.html`]: html.replace(link, `<link rel="stylesheet" href="${cssFile}">`).replace(script, `<script src="${jsFile}"></script>`),
  [`${name}.inline.html`]: html.replace(link, () => `<style>\n${css}</style>`).replace(script, () => `<script>\n${js}</script>`),
};

if (process.argv.includes('--check')) {
  const present = existsSync(dist) ? readdirSync(dist).filter((f) => f.startsWith(name)) : [];
  const stale = present.filter((f) => !(f in outputs));
  const wrong = Object.entries(outputs).filter(([f, text]) => !existsSync(join(dist, f)) || readFileSync(join(dist, f), 'utf8') !== text);
  if (stale.length || wrong.length) {
    console.error(`widgets/dist is out of date (${[...stale, ...wrong.map(([f]) => f)].join(', ')}); run: node widgets/build.mjs`);
    process.exit(1);
  }
  console.log('widgets/dist is up to date');
} else {
  mkdirSync(dist, { recursive: true });
  for (const f of readdirSync(dist)) if (f.startsWith(name) && !(f in outputs)) rmSync(join(dist, f));
  for (const [f, text] of Object.entries(outputs)) writeFileSync(join(dist, f), text);
  const bytes = Buffer.byteLength(outputs[`${name}.inline.html`]);
  console.log(`built ${Object.keys(outputs).join(', ')} (${bytes} bytes inline)`);
}
