// client.mjs - an MCP session driven by the reference SDK's own client, for the capture
// tests (tests/pcap2spans/t_mcp.sh).  Nothing here speaks the protocol: the SDK does.
//
//   node client.mjs http|sse|ws URL LOG      (ws: Node 20 needs --experimental-websocket)
//
// It calls tools (one slow, one that makes the server ask *us* for a sampling, one that
// does not exist), calls a method that does not exist (a JSON-RPC error), lists and reads resources and prompts, pings, and answers the server's
// sampling/createMessage with a canned result.  Every JSON-RPC message the transport
// sends or receives is appended to LOG, one JSON object a line:
//   {"dir":"c2s"|"s2c","kind":"request"|"notification"|"response","method":...,"id":...,"error":code|null}
// (a response names the method of the request it answers, found by id and direction).
import { appendFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { CreateMessageRequestSchema, EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [kind, url, log] = process.argv.slice(2);
if (!["http", "sse", "ws"].includes(kind) || !url || !log) {
  console.error("usage: node client.mjs http|sse|ws URL LOG");
  process.exit(2);
}
writeFileSync(log, "");

const sent = new Map(); // "dir id" -> method of a request, for naming its response
function record(dir, m) {
  for (const one of Array.isArray(m) ? m : [m]) {
    let row;
    if (one.method !== undefined) {
      const k = one.id === undefined ? "notification" : "request";
      row = { dir, kind: k, method: one.method, id: one.id ?? null, error: null };
      if (k === "request") sent.set(`${dir} ${JSON.stringify(one.id)}`, one.method);
    } else {
      const req = dir === "c2s" ? "s2c" : "c2s";
      row = {
        dir,
        kind: "response",
        method: sent.get(`${req} ${JSON.stringify(one.id)}`) ?? null,
        id: one.id ?? null,
        error: one.error ? one.error.code : null,
        isError: one.result?.isError === true,
      };
    }
    appendFileSync(log, JSON.stringify(row) + "\n");
  }
}

// The transport's traffic, seen where it enters and leaves the SDK's client.
function tap(t) {
  const send = t.send.bind(t);
  t.send = (m, o) => {
    record("c2s", m);
    return send(m, o);
  };
  let handler;
  Object.defineProperty(t, "onmessage", {
    get: () => handler,
    set: (f) => {
      handler = f && ((m, extra) => (record("s2c", m), f(m, extra)));
    },
  });
  return t;
}

const transports = {
  http: () => new StreamableHTTPClientTransport(new URL(url)),
  sse: () => new SSEClientTransport(new URL(url)),
  ws: () => new WebSocketClientTransport(new URL(url)),
};
const transport = tap(transports[kind]());
const client = new Client(
  { name: "spanfold-test-client", version: "1.0.0" },
  { capabilities: { sampling: {} } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  model: "canned-model",
  role: "assistant",
  stopReason: "endTurn",
  content: { type: "text", text: `canned answer to ${req.params.messages.length} message(s)` },
}));

const meta = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
await client.connect(transport);
await client.listTools();
await client.callTool({ name: "echo", arguments: { message: "hello" }, _meta: meta });
await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
await client.callTool({
  name: "trigger-long-running-operation",
  arguments: { duration: 2, steps: 4 },
  _meta: { progressToken: "p1" },
});
await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "Say hi", maxTokens: 32 } });
await client.callTool({ name: "no-such-tool", arguments: {} }).catch(() => {});
const res = await client.listResources();
if (res.resources.length) await client.readResource({ uri: res.resources[0].uri });
await client.listPrompts();
await client.getPrompt({ name: "simple-prompt" }).catch(() => {});
await client.ping();
await client.request({ method: "no/such-method", params: {} }, EmptyResultSchema).catch(() => {});
await Promise.all([
  client.callTool({ name: "echo", arguments: { message: "a" } }),
  client.callTool({ name: "get-sum", arguments: { a: 1, b: 1 } }),
]);
await client.close();
