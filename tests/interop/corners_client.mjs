// The official MCP TypeScript client (2.x) through mcp-gateway, on the rest
// of MCP beside tools (issue 76), in either generation: a 2025 server's
// prompt and completions (server-everything), logging/setLevel, and a
// Python SDK server's roots and log messages (corners_server.py), the client
// answering roots/list with file:///srv/project-x and reading log messages
// from `info` up.
//
// Usage: node corners_client.mjs URL MODE   (MODE: legacy | 2026-07-28)
// Prints one JSON line of what came back; a refused request gives its code.
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, mode] = process.argv.slice(2);
const modern = mode === "2026-07-28";
const client = new Client(
  { name: "corners-client", version: "1" },
  {
    capabilities: { roots: {} },
    ...(modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
  },
);
const logged = [];
client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///srv/project-x", name: "project x" }] }));
client.setNotificationHandler("notifications/message", async (n) => {
  logged.push({ level: n.params.level, data: n.params.data });
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const outcome = (request) => request.catch((e) => ({ error: e.code, message: e.message }));
const values = (r) => (r.error ? r : r.completion.values);
const prompt = "everything:completable-prompt";
const got = await outcome(client.getPrompt({ name: prompt, arguments: { department: "Engineering", name: "Alice" } }));
const department = await outcome(client.complete({ ref: { type: "ref/prompt", name: prompt }, argument: { name: "department", value: "E" } }));
const lead = await outcome(
  client.complete({
    ref: { type: "ref/prompt", name: prompt },
    argument: { name: "name", value: "A" },
    context: { arguments: { department: "Engineering" } },
  }),
);
const setLevel = await outcome(client.setLoggingLevel("info"));
// At 2026-07-28 a request names its log level; a 2025 session set it above.
const meta = modern ? { [LOG_LEVEL_META_KEY]: "info" } : undefined;
const execute = (toolKey) => client.callTool({ name: "tool_execute", arguments: { toolKey, arguments: {} }, _meta: meta });
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join(" ");
const where = text(await execute("corners:where"));
const chatty = text(await execute("corners:chatty"));
await new Promise((resolve) => setTimeout(resolve, 200));
console.log(
  JSON.stringify({
    prompt: got.error ? got : got.messages[0].content.text,
    department: values(department),
    lead: values(lead),
    setLevel: setLevel.error ? setLevel : "ok",
    where,
    chatty,
    logged,
  }),
);
await client.close();
