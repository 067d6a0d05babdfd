// ws-server.mjs - the server-everything example's MCP server (its own createServer,
// from the npm registry) reached over WebSocket, for tests/pcap2spans/t_mcp.sh.  The
// SDK has a WebSocket client transport but no server one; this file is that missing
// piece and nothing more: each connection (subprotocol "mcp", the client transport's)
// gets a server, and every text message is one JSON-RPC message each way.  The `ws`
// package does the WebSocket protocol, with permessage-deflate on every message.
//
//   PORT=N node ws-server.mjs
import { WebSocketServer } from "ws";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const port = Number(process.env.PORT || 3001);
const wss = new WebSocketServer({
  port,
  host: "127.0.0.1",
  perMessageDeflate: { threshold: 0 },
  handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
});
wss.on("connection", async (socket) => {
  const transport = {
    async start() {},
    async send(message) {
      socket.send(JSON.stringify(message));
    },
    async close() {
      socket.close();
    },
  };
  socket.on("message", (data) => transport.onmessage?.(JSON.parse(data.toString())));
  socket.on("close", () => transport.onclose?.());
  const { server } = createServer();
  await server.connect(transport);
});
wss.on("listening", () => console.error(`MCP over WebSocket on 127.0.0.1:${port}`));
