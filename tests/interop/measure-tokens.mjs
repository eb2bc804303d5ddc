// Measures what a client's context pays for tools/list: the gateway's two
// meta-tools against the sum of every downstream's own tools/list, in
// o200k_base tokens (GPT-4o / GPT-5 family).
//
// Usage: node tests/interop/measure-tokens.mjs PATH/TO/mcp-gateway [gateway.toml]
// The config (default: a demo server plus server-everything) must use stdio servers.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

const [gateway, configArg] = process.argv.slice(2);
if (!gateway) {
  console.error("usage: node measure-tokens.mjs PATH/TO/mcp-gateway [gateway.toml]");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
let config = configArg;
if (!config) {
  config = join(mkdtempSync(join(tmpdir(), "mcpgw-")), "gateway.toml");
  writeFileSync(config, `[[servers]]
name = "demo"
command = "${gateway}"
args = ["demo-server"]

[[servers]]
name = "everything"
command = "${join(here, "node_modules/.bin/mcp-server-everything")}"
args = ["stdio"]
`);
}

async function toolsOf(command, args) {
  const client = new Client({ name: "measure-tokens", version: "1" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  const { tools } = await client.listTools();
  await client.close();
  return tools;
}

const parsed = readFileSync(config, "utf8");
const rows = [];
let total = 0;
for (const block of parsed.split("[[servers]]").slice(1)) {
  const name = /name\s*=\s*"([^"]+)"/.exec(block)[1];
  const command = /command\s*=\s*"([^"]+)"/.exec(block)[1].replace("${MCP_GATEWAY_EXE}", gateway);
  const args = JSON.parse((/args\s*=\s*(\[[^\]]*\])/.exec(block) ?? [, "[]"])[1]);
  const tools = await toolsOf(command, args);
  const tokens = countTokens(JSON.stringify({ tools }));
  total += tokens;
  rows.push({ server: name, tools: tools.length, tokens });
}
const meta = await toolsOf(gateway, ["serve", "--config", config]);
const gatewayTokens = countTokens(JSON.stringify({ tools: meta }));
console.table(rows);
console.log(JSON.stringify({
  downstreamServers: rows.length,
  downstreamTools: rows.reduce((n, r) => n + r.tools, 0),
  downstreamTokens: total,
  gatewayTools: meta.length,
  gatewayTokens,
  saved: `${(100 * (1 - gatewayTokens / total)).toFixed(1)}%`,
}));
