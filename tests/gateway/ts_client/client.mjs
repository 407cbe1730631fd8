// The TypeScript SDK's own client against `mcpyard serve` (GW-1), run by tests/gateway/test_clients.py.
//
//   node client.mjs stdio <command> <args...>   launches the gateway itself and talks over stdio
//   node client.mjs http <url>                  connects over streamable HTTP
//
// Over HTTP, MCPYARD_TEST_BEARER (if set) is sent as `Authorization: Bearer …`. It lists the tools,
// calls MCPYARD_TEST_TOOL with the JSON object MCPYARD_TEST_ARGUMENTS (basic__add with {a: 2, b: 3}
// unless set), prints one JSON line
// {"tools": [...names], "text": "<result text>", "isError": bool} and exits 0 (1 on any error).
// The SDK is not installed here: scripts/check installs it in .tools/clients and exports
// MCPYARD_TEST_CLIENTS, the folder holding its node_modules; it is imported by absolute path.
import path from "node:path";
import { pathToFileURL } from "node:url";

const clients = process.env.MCPYARD_TEST_CLIENTS;
if (!clients) {
  console.error("MCPYARD_TEST_CLIENTS is not set: point it at the folder scripts/check installs the clients in");
  process.exit(2);
}
const sdk = path.resolve(clients, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (file) => import(pathToFileURL(path.join(sdk, file)).href);

const { Client } = await load("client/index.js");
const [mode, ...target] = process.argv.slice(2);

async function transport() {
  if (mode === "stdio" && target.length > 0) {
    const { StdioClientTransport } = await load("client/stdio.js");
    // The SDK passes only a few "safe" variables to the server unless told otherwise; the
    // gateway needs the test's isolated MCPYARD_* folders, so it gets this process's env
    // (without the test's own MCPYARD_TEST_* settings).
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key, value]) => value !== undefined && !key.startsWith("MCPYARD_TEST_")),
    );
    const [command, ...args] = target;
    return new StdioClientTransport({ command, args, env, stderr: "inherit" });
  }
  if (mode === "http" && target.length === 1) {
    const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
    const bearer = process.env.MCPYARD_TEST_BEARER;
    const requestInit = bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined;
    return new StreamableHTTPClientTransport(new URL(target[0]), { requestInit });
  }
  console.error("usage: node client.mjs stdio <command> <args...> | node client.mjs http <url>");
  process.exit(2);
}

const client = new Client({ name: "mcpyard-gw1-ts-client", version: "1.0.0" });
try {
  await client.connect(await transport());
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor);
  const name = process.env.MCPYARD_TEST_TOOL ?? "basic__add";
  const args = JSON.parse(process.env.MCPYARD_TEST_ARGUMENTS ?? '{"a": 2, "b": 3}');
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
  console.log(JSON.stringify({ tools, text, isError: Boolean(result.isError) }));
  await client.close();
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
}
