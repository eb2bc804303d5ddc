// collect.mjs: dumps the real `tools/list` of public MCP servers into
// benches/data/catalog/<server>.json, for the tool-search quality benchmark.
//
// What it does
//   1. Reads benches/data/servers.json: one entry per server with its registry
//      (npm | pypi), package, pinned version, the executable ("bin") the package
//      installs, and the args/env used to start it over stdio. Credentials in
//      "env"/"args" are dummies: these servers list their tools without talking
//      to their backend.
//   2. With --install, installs every package that is not installed yet into a
//      scratch root outside the repo (default /tmp/mcp-collect):
//        npm : npm install --prefix ROOT/npm/<name> <package>@<version>
//        pypi: uv venv ROOT/pypi/<name> && uv pip install <package>==<version> [pip_extra...]
//              (uv itself is pip-installed into ROOT/tools on first use)
//   3. Starts each server with the MCP TypeScript SDK's Client +
//      StdioClientTransport (from tests/interop/node_modules), sends
//      `tools/list` (following nextCursor), and writes the tools exactly as the
//      server returned them (raw JSON-RPC result, no SDK schema stripping).
//      Each server gets a time limit ("timeout" in servers.json, default 30 s):
//      a server that hangs, crashes or lists nothing is reported and skipped.
//   4. Writes benches/data/collect-report.json (status, tool count or error per
//      server). A server whose listing exceeds 1 MiB is dropped, not truncated.
//
// Other servers.json fields: "skip" (why it is left out; such entries run only
// when named with --only), "command" (instead of bin, e.g. node + a script for a
// package whose bin has no shebang), "timeout" (seconds), "npm_flags",
// "pip_extra".
//
// Placeholders in command/args/env: ${ROOT} = scratch root, ${SCRATCH} =
// ROOT/scratch (dummy files, a git repo, an empty Obsidian vault, dummy OAuth and
// kubeconfig files are created there; sqlite/duckdb servers create their db), ${HOME} = ROOT/home (servers get this HOME so they
// never see the real one). Servers run with a minimal environment: PATH, HOME,
// LANG plus their own "env" entries.
//
// Rerun (from the repo root):
//   node benches/data/collect.mjs --install            # install missing + dump all
//   node benches/data/collect.mjs --only github,slack  # dump a few again
// Options: --root DIR (scratch root), --jobs N (parallel servers, default 2),
//          --date YYYY-MM-DD (the "collected" stamp, default 2026-11-22),
//          --timeout SECONDS (default for servers without their own).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");

// ---- options ---------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const ROOT = resolve(opt("root", "/tmp/mcp-collect"));
const SCRATCH = join(ROOT, "scratch");
const HOME = join(ROOT, "home");
const JOBS = Number(opt("jobs", "2"));
const DATE = opt("date", "2026-11-22");
const DEFAULT_TIMEOUT = Number(opt("timeout", "30"));
const ONLY = opt("only", "") ? new Set(opt("only", "").split(",")) : null;
const INSTALL = argv.includes("--install");
const MAX_BYTES = 1024 * 1024;

// ---- MCP SDK from tests/interop ---------------------------------------------
const req = createRequire(join(repo, "tests/interop/package.json"));
const sdk = (p) => import(pathToFileURL(req.resolve(`@modelcontextprotocol/sdk/${p}`)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ResultSchema } = await sdk("types.js"); // loose: keeps every field

// ---- scratch fixtures --------------------------------------------------------
function prepareScratch() {
  for (const d of [SCRATCH, HOME, join(SCRATCH, "files"), join(SCRATCH, "vault/.obsidian"), join(SCRATCH, "repo")]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(join(SCRATCH, "files/README.md"), "# scratch\n");
  writeFileSync(join(SCRATCH, "vault/Welcome.md"), "# Welcome\n");
  writeFileSync(join(SCRATCH, "gdrive-credentials.json"), "{}\n"); // dummy OAuth token for server-gdrive
  // dummy Google OAuth client file (google-calendar, gdrive)
  writeFileSync(join(SCRATCH, "gcp-oauth.keys.json"), JSON.stringify({ installed: {
    client_id: "dummy.apps.googleusercontent.com", client_secret: "dummy", redirect_uris: ["http://localhost"],
    auth_uri: "https://accounts.google.com/o/oauth2/auth", token_uri: "https://oauth2.googleapis.com/token" } }) + "\n");
  // dummy kubeconfig (mcp-server-kubernetes reads one at startup)
  writeFileSync(join(SCRATCH, "kubeconfig"), [
    "apiVersion: v1", "kind: Config", "current-context: dummy",
    "clusters:", "- name: dummy", "  cluster:", "    server: https://127.0.0.1:6443",
    "contexts:", "- name: dummy", "  context:", "    cluster: dummy", "    user: dummy",
    "users:", "- name: dummy", "  user:", "    token: dummy", ""].join("\n"));
  if (!existsSync(join(SCRATCH, "repo/.git"))) {
    const git = (...a) => execFileSync("git", ["-C", join(SCRATCH, "repo"), ...a], { stdio: "ignore" });
    git("init", "-q");
    writeFileSync(join(SCRATCH, "repo/README.md"), "# scratch repo\n");
    git("add", "README.md");
    git("-c", "user.name=collect", "-c", "user.email=collect@example.invalid", "commit", "-qm", "init");
  }
}

// ---- install -----------------------------------------------------------------
function installDir(s) {
  return join(ROOT, s.registry, s.name);
}
function install(s) {
  const dir = installDir(s);
  const env = { ...process.env, PUPPETEER_SKIP_DOWNLOAD: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };
  if (s.registry === "npm") {
    const pj = join(dir, "node_modules", s.package, "package.json");
    if (existsSync(pj) && JSON.parse(readFileSync(pj, "utf8")).version === s.version) return;
    mkdirSync(dir, { recursive: true });
    // npm_flags: e.g. --ignore-scripts for packages whose install script downloads
    // a browser or insists on pnpm (not needed to list tools).
    execFileSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", ...(s.npm_flags ?? []), `${s.package}@${s.version}`], { stdio: "inherit", env });
  } else {
    const site = join(dir, "lib/python3.11/site-packages");
    const dist = `${s.package.replace(/[-_.]+/g, "_").toLowerCase()}-${s.version}.dist-info`;
    if (existsSync(site) && readdirSync(site).some((f) => f.toLowerCase() === dist)) return;
    const uv = join(ROOT, "tools/bin/uv");
    if (!existsSync(uv)) {
      execFileSync("python3", ["-m", "venv", join(ROOT, "tools")], { stdio: "inherit" });
      execFileSync(join(ROOT, "tools/bin/pip"), ["install", "-q", "uv"], { stdio: "inherit" });
    }
    execFileSync(uv, ["venv", "-q", "--python", "python3.11", dir], { stdio: "inherit", env });
    // pip_extra: version pins a server needs beside its own (e.g. "mcp<2" for servers
    // written against the 1.x Python SDK whose requirement is unbounded).
    execFileSync(uv, ["pip", "install", "-q", `${s.package}==${s.version}`, ...(s.pip_extra ?? [])], { stdio: "inherit", env: { ...env, VIRTUAL_ENV: dir } });
  }
}

// ---- collect -------------------------------------------------------------------
const subst = (v) => v.replaceAll("${ROOT}", ROOT).replaceAll("${SCRATCH}", SCRATCH).replaceAll("${HOME}", HOME);

function commandOf(s) {
  const dir = installDir(s);
  const binDir = s.registry === "npm" ? join(dir, "node_modules/.bin") : join(dir, "bin");
  return {
    command: s.command ? subst(s.command) : join(binDir, s.bin),
    args: (s.args ?? []).map(subst),
    cwd: s.cwd ? subst(s.cwd) : SCRATCH,
    env: {
      PATH: `${binDir}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME,
      LANG: "C.UTF-8",
      ...Object.fromEntries(Object.entries(s.env ?? {}).map(([k, v]) => [k, subst(v)])),
    },
  };
}

async function listTools(s) {
  const { command, args, cwd, env } = commandOf(s);
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => { stderr = (stderr + d).slice(-4000); });
  const client = new Client({ name: "mcp-gateway-bench-collect", version: "1" });
  const timeoutMs = 1000 * (s.timeout ?? DEFAULT_TIMEOUT);
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000}s`)), timeoutMs);
  });
  const work = (async () => {
    await client.connect(transport);
    const tools = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const res = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        ResultSchema,
        { timeout: timeoutMs },
      );
      tools.push(...(res.tools ?? []));
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return tools;
  })();
  try {
    return { tools: await Promise.race([work, deadline]) };
  } catch (e) {
    return { error: `${e.message}`.slice(0, 300), stderr: stderr.trim().split("\n").slice(-5).join("\n") };
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
  }
}

async function collectOne(s, report) {
  const t0 = Date.now();
  if (!s.name.match(/^[A-Za-z0-9._-]+$/)) throw new Error(`bad server name ${s.name}`);
  const { tools, error, stderr } = await listTools(s);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  if (error || !tools?.length) {
    report[s.name] = { status: "failed", error: error ?? "listed no tools", stderr };
    console.log(`FAIL ${s.name} (${secs}s): ${report[s.name].error}`);
    return;
  }
  const out = {
    server: s.name,
    description: s.description,
    source: { registry: s.registry, package: s.package, version: s.version, collected: DATE },
    tools,
  };
  const text = JSON.stringify(out, null, 2) + "\n";
  if (Buffer.byteLength(text) > MAX_BYTES) {
    report[s.name] = { status: "dropped", error: `listing is ${Buffer.byteLength(text)} bytes (> 1 MiB)`, tools: tools.length };
    console.log(`DROP ${s.name}: ${report[s.name].error}`);
    return;
  }
  writeFileSync(join(here, "catalog", `${s.name}.json`), text);
  report[s.name] = { status: "ok", tools: tools.length, bytes: Buffer.byteLength(text) };
  console.log(`ok   ${s.name} (${secs}s): ${tools.length} tools`);
}

// Entries with "skip" (a reason) are known not to list here; they are tried
// only when named with --only.
const allServers = JSON.parse(readFileSync(join(here, "servers.json"), "utf8")).servers;
const servers = allServers.filter((s) => (ONLY ? ONLY.has(s.name) : !s.skip));
prepareScratch();
mkdirSync(join(here, "catalog"), { recursive: true });
const reportPath = join(here, "collect-report.json");
const report = existsSync(reportPath) && ONLY ? JSON.parse(readFileSync(reportPath, "utf8")) : {};
for (const s of allServers) {
  if (s.skip && !ONLY?.has(s.name)) report[s.name] = { status: "skipped", error: s.skip };
}
const installFailed = new Set();
if (INSTALL) {
  for (const s of servers) {
    try {
      install(s);
    } catch (e) {
      installFailed.add(s.name);
      report[s.name] = { status: "failed", error: `install failed: ${e.message}`.slice(0, 300) };
    }
  }
}
const queue = servers.filter((s) => !installFailed.has(s.name));
await Promise.all(Array.from({ length: JOBS }, async () => {
  for (let s; (s = queue.shift()); ) await collectOne(s, report);
}));
const sorted = Object.fromEntries(Object.keys(report).sort().map((k) => [k, report[k]]));
writeFileSync(reportPath, JSON.stringify(sorted, null, 2) + "\n");
const ok = Object.values(report).filter((r) => r.status === "ok");
console.log(`${ok.length} servers, ${ok.reduce((n, r) => n + r.tools, 0)} tools; report in ${reportPath}`);
process.exit(0);
