// `marlin-agent mcp` driven by the official TypeScript MCP SDK's client, as Node-based hosts drive it: start,
// list the tools, call list_videos, close; three starts against one MARLIN_HOME, so the first is answered by
// the Python SDK and the later ones open from the recorded replies (mcp_server/opening.py).
//
//   npm install --prefix /tmp/mcp-ts @modelcontextprotocol/sdk
//   NODE_PATH=/tmp/mcp-ts/node_modules node evals/interop/mcp_typescript.mjs FOLDER
//
// Prints one JSON line per start; exits non-zero when a start's tools or answer differ from the first's.
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(join(process.env.NODE_PATH || ".", "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const root = process.argv[2] || process.cwd();
const env = { ...process.env, MARLIN_HOME: mkdtempSync(join(tmpdir(), "marlin-ts-")), MARLIN_RESIDENT: "off" };
let first = null;
for (let start = 1; start <= 3; start++) {
  const began = Date.now();
  const transport = new StdioClientTransport({ command: "python", args: ["-m", "marlin_agent", "mcp", "--root", root], env });
  const client = new Client({ name: "marlin-interop", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const listedMs = Date.now() - began;
  const answer = await client.callTool({ name: "list_videos", arguments: {} });
  await client.close();
  const seen = { tools: tools.map((t) => [t.name, t.description, t.inputSchema, t.outputSchema]),
                 roots: answer.structuredContent.roots, error: answer.isError };
  console.log(JSON.stringify({ start, listed_ms: listedMs, tools: tools.length, roots: seen.roots, error: seen.error }));
  first ??= seen;
  if (JSON.stringify(seen) !== JSON.stringify(first) || seen.error) process.exit(1);
}
