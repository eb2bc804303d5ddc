// Runs one code-mode script through mcp-gateway with the official MCP
// TypeScript SDK, a client nobody here wrote.
//
// Usage: node script_client.mjs (URL | stdio:GATEWAY_BINARY:CONFIG) SCRIPT_FILE KEY...
// Waits until tool_discovery finds every KEY (a server's tools reach the
// catalog a moment after it starts), then prints the script's
// structuredContent ({result, logs, calls}) as one JSON line.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [target, scriptFile, ...keys] = process.argv.slice(2);
const transport = target.startsWith("stdio:")
  ? (() => {
      const [, command, config] = target.split(":");
      return new StdioClientTransport({ command, args: ["serve", "--config", config], stderr: "ignore" });
    })()
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "script-client", version: "1" });
await client.connect(transport);
const { tools } = await client.listTools();
const execute = tools.find((t) => t.name === "tool_execute");
if (!execute.inputSchema.properties.script) throw new Error("tool_execute takes no script");
for (const key of keys) {
  for (let tries = 0; ; tries++) {
    const query = key.split(":")[1].replace(/[-_]/g, " ");
    const found = await client.callTool({ name: "tool_discovery", arguments: { query, maxResults: 50 } });
    if (found.structuredContent.results.some((r) => r.toolKey === key)) break;
    if (tries === 100) throw new Error(`${key} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
const result = await client.callTool({ name: "tool_execute", arguments: { script: readFileSync(scriptFile, "utf8") } });
if (result.isError) {
  console.error(JSON.stringify(result));
  process.exit(1);
}
console.log(JSON.stringify(result.structuredContent));
await client.close();
