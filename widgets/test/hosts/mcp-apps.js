// An MCP Apps host, on the official host side (@modelcontextprotocol/ext-apps
// app-bridge), doing what its reference host (examples/basic-host) does: the
// App comes from the called tool's definition in tools/list, the AppBridge
// forwards the App's tools/call to the server through the host's client.
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { connect, cspMeta, listedTool, readTemplate, sandboxedFrame, stage, summary, withHead } from './common.js';

const HOST = { name: 'mcp-gateway test host (MCP Apps)', version: '1.0.0' };
/** The MCP Apps extension, as a client that renders Apps advertises it. */
const APPS_EXTENSION = { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } };

/** What the App hears from its host besides the tool call: kept for the test. */
window.hostLog = [];

/** An AppBridge for `tool`'s App in `iframe`, with the handlers basic-host registers. */
function bridgeFor(client, tool, iframe) {
  const server = client.getServerCapabilities();
  const bridge = new AppBridge(
    client,
    HOST,
    { openLinks: {}, serverTools: server?.tools, serverResources: server?.resources, logging: {}, message: { text: {} } },
    {
      hostContext: {
        toolInfo: { tool },
        theme: 'light',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: { maxWidth: 760, maxHeight: 4000 },
        locale: 'en-US',
        platform: 'web',
      },
    },
  );
  bridge.onmessage = async (params) => {
    window.hostLog.push({ message: params });
    return {};
  };
  bridge.onopenlink = async (params) => {
    window.hostLog.push({ openLink: params.url });
    return {};
  };
  bridge.onloggingmessage = (params) => window.hostLog.push({ log: params });
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) iframe.style.height = `${height}px`;
  };
  return bridge;
}

/** Calls `name` with `args` and shows its App; resolves with the result once the App has it. */
window.runHost = async ({ tool: name, args, token }) => {
  stage('connecting to the gateway');
  const client = await connect({ token, capabilities: { extensions: APPS_EXTENSION } });
  stage('listing tools');
  const tool = await listedTool(client, name);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name}'s definition in tools/list names no App (_meta.ui.resourceUri): ${JSON.stringify(tool._meta ?? null)}`);
  stage(`reading ${uri}`);
  const { html, meta } = await readTemplate(client, uri, RESOURCE_MIME_TYPE);

  const iframe = sandboxedFrame();
  const bridge = bridgeFor(client, tool, iframe);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withHead(html, cspMeta(meta.ui?.csp));
  stage('waiting for the App to send ui/notifications/initialized');
  await initialized;

  await bridge.sendToolInput({ arguments: args });
  stage(`calling ${name}`);
  let result;
  try {
    result = await client.callTool({ name, arguments: args });
  } catch (e) {
    await bridge.sendToolCancelled({ reason: String(e?.message ?? e) });
    throw e;
  }
  await bridge.sendToolResult(result);
  stage('done');
  return { uri, ...summary(result) };
};
