// validate.mjs: checks benches/data against itself. Run from the repo root:
//   node benches/data/validate.mjs
// - every catalog/<server>.json is well-formed (server name matches the file,
//   source fields present, tools have a name and an inputSchema, < 1 MiB);
// - every "server:tool" key in tasks.jsonl (relevant, step_relevant) exists;
// - task shape: unique ids, split tune|holdout, kind single|multi, multi tasks
//   have 2-5 steps with one relevant tool per step (in step order);
// prints the totals that README.md quotes. Exits 1 on any problem.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const problems = [];
const bad = (m) => problems.push(m);

const keys = new Set();
const servers = [];
for (const f of readdirSync(join(here, "catalog")).filter((f) => f.endsWith(".json")).sort()) {
  const path = join(here, "catalog", f);
  if (statSync(path).size >= 1024 * 1024) bad(`${f}: 1 MiB or more`);
  const c = JSON.parse(readFileSync(path, "utf8"));
  if (`${c.server}.json` !== f) bad(`${f}: server is ${c.server}`);
  if (!/^[A-Za-z0-9._-]+$/.test(c.server)) bad(`${f}: bad server name`);
  if (!c.description) bad(`${f}: no description`);
  const s = c.source ?? {};
  if (!["npm", "pypi"].includes(s.registry) || !s.package || !s.version || !s.collected) bad(`${f}: bad source`);
  const names = new Set();
  for (const t of c.tools ?? []) {
    if (!t.name || typeof t.inputSchema !== "object") bad(`${f}: tool without name/inputSchema`);
    if (names.has(t.name)) bad(`${f}: duplicate tool ${t.name}`);
    names.add(t.name);
    keys.add(`${c.server}:${t.name}`);
  }
  if (!names.size) bad(`${f}: no tools`);
  servers.push({ server: c.server, pkg: `${s.package}@${s.version}`, registry: s.registry, tools: names.size });
}

const tasks = readFileSync(join(here, "tasks.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const ids = new Set();
const used = new Set();
const count = {};
for (const t of tasks) {
  const tag = t.id ?? "(no id)";
  if (ids.has(t.id)) bad(`${tag}: duplicate id`);
  ids.add(t.id);
  if (!t.query?.trim()) bad(`${tag}: empty query`);
  if (!["tune", "holdout"].includes(t.split)) bad(`${tag}: split ${t.split}`);
  if (!["single", "multi"].includes(t.kind)) bad(`${tag}: kind ${t.kind}`);
  if (!Array.isArray(t.relevant) || !t.relevant.length) bad(`${tag}: no relevant`);
  const all = [...(t.relevant ?? []), ...(t.step_relevant ?? []).flat()];
  for (const k of all) {
    if (!keys.has(k)) bad(`${tag}: unknown tool ${k}`);
    used.add(k.split(":")[0]);
  }
  if (t.kind === "multi") {
    const n = t.steps?.length ?? 0;
    if (n < 2 || n > 5) bad(`${tag}: ${n} steps`);
    if (t.relevant.length !== n) bad(`${tag}: ${t.relevant.length} relevant for ${n} steps`);
    if (t.step_relevant) {
      if (t.step_relevant.length !== n) bad(`${tag}: step_relevant length`);
      t.step_relevant.forEach((alts, i) => {
        if (alts[0] !== t.relevant[i]) bad(`${tag}: step ${i + 1} relevant is not first of step_relevant`);
      });
    }
  } else if (t.steps || t.step_relevant) bad(`${tag}: steps on a single task`);
  const c = `${t.kind}/${t.split}`;
  count[c] = (count[c] ?? 0) + 1;
}

const totalTools = servers.reduce((n, s) => n + s.tools, 0);
console.log(JSON.stringify({
  servers: servers.length,
  tools: totalTools,
  tasks: tasks.length,
  byKindSplit: count,
  serversUsedByTasks: used.size,
}, null, 1));
if (process.argv.includes("--table")) {
  for (const s of servers) console.log(`| ${s.server} | ${s.registry} | \`${s.pkg}\` | ${s.tools} |`);
}
if (problems.length) {
  console.error(problems.join("\n"));
  console.error(`${problems.length} problem(s)`);
  process.exit(1);
}
console.log("ok");
