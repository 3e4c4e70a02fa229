// Drives `engram mcp` with the official MCP TypeScript SDK's stdio client:
// connects (initialize lifecycle), lists the tools, calls every tool and checks
// the results (the SDK validates structuredContent against each outputSchema),
// checks tool-level and protocol-level errors, then closes stdin and expects
// the server to exit 0. Usage: node client_test.mjs /path/to/engram
// Exits 0 on success, 1 on failure (also when node_modules is missing: run make test).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

let Client, StdioClientTransport;
try {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
} catch (e) {
  console.error(`FAIL: @modelcontextprotocol/sdk is not installed (run: npm ci --prefix tests/mcp-client): ${e.message}`);
  process.exit(1);
}

const binary = process.argv[2] || process.env.ENGRAM_BINARY;
if (!binary || !fs.existsSync(binary)) {
  console.error(`usage: node client_test.mjs /path/to/engram (got ${binary})`);
  process.exit(1);
}

const failures = [];
const exercised = [];
function check(cond, what) {
  if (!cond) failures.push(what);
}
function structured(result, tool) {
  check(result.isError !== true, `${tool}: isError ${JSON.stringify(result.content)}`);
  check(Array.isArray(result.content) && result.content[0]?.type === "text", `${tool}: text content`);
  check(result.structuredContent && typeof result.structuredContent === "object", `${tool}: structuredContent`);
  check(JSON.stringify(JSON.parse(result.content[0].text)) === JSON.stringify(result.structuredContent),
        `${tool}: text content is the serialized structuredContent`);
  exercised.push(tool);
  return result.structuredContent;
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), "engram-mcp-sdk-"));
const transport = new StdioClientTransport({
  command: binary,
  args: ["mcp", "--user", "sdk-user", "--assistant", "sdk-assistant"],
  env: { ...process.env, ENGRAM_HOME: home, ENGRAM_DB: "", ENGRAM_USER: "" },
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));
const client = new Client({ name: "engram-sdk-test", version: "1.0.0" });

try {
  await client.connect(transport);
  const info = client.getServerVersion();
  check(info?.name === "engram", `serverInfo.name: ${JSON.stringify(info)}`);
  const caps = client.getServerCapabilities();
  check(caps?.tools && caps.tools.listChanged === false, `capabilities.tools: ${JSON.stringify(caps)}`);
  check(!caps?.resources && !caps?.prompts && !caps?.logging, `only tools advertised: ${JSON.stringify(caps)}`);
  await client.ping();
  exercised.push("ping");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = ["add_fact", "add_memory", "delete_memory", "get_user_profile", "list_memories", "memory_health",
                "retrieve_memory", "search_memories", "update_memory"];
  check(JSON.stringify(names) === JSON.stringify(want), `tools: ${names}`);
  for (const t of tools) {
    check(t.inputSchema?.type === "object", `${t.name}: inputSchema`);
    check(t.outputSchema?.type === "object", `${t.name}: outputSchema`);
    for (const h of ["readOnlyHint", "destructiveHint", "idempotentHint"]) {
      check(typeof t.annotations?.[h] === "boolean", `${t.name}: annotations.${h}`);
    }
  }
  exercised.push("tools/list");
  const readOnly = Object.fromEntries(tools.map((t) => [t.name, t.annotations.readOnlyHint]));
  check(readOnly.retrieve_memory === true && readOnly.add_memory === false, "read-only hints");

  const call = (name, args) => client.callTool({ name, arguments: args });
  let s = structured(await call("add_memory", { user_input: "My dog is called Rex and I live in Lisbon.",
    agent_response: "Rex is a great name!", timestamp: "2025-06-01T10:00:00Z", meta_data: { source: "sdk" } }),
    "add_memory");
  check(s.turn_id > 0 && s.seq === 1, `add_memory: ${JSON.stringify(s)}`);
  s = structured(await call("retrieve_memory", { query: "What is my dog called?", max_results: 5, budget: 800 }),
    "retrieve_memory");
  check(s.context.includes("Rex") && s.recent_turns.length === 1, `retrieve_memory: ${JSON.stringify(s)}`);
  for (const k of ["pages", "profile", "user_facts", "assistant_facts"]) check(Array.isArray(s[k]), `retrieve: ${k}`);
  s = structured(await call("get_user_profile", {}), "get_user_profile");
  check(Array.isArray(s.profile) && typeof s.text === "string", `get_user_profile: ${JSON.stringify(s)}`);
  s = structured(await call("add_fact", { text: "Prefers metric units", metadata: { category: "prefs" } }), "add_fact");
  const id = s.results?.[0]?.id;
  check(/^m_[0-9a-f]{16}$/.test(id) && s.results[0].event === "ADD", `add_fact: ${JSON.stringify(s)}`);
  s = structured(await call("search_memories", { query: "metric units", top_k: 5 }), "search_memories");
  check(s.results.length === 1 && s.results[0].id === id && s.results[0].score > 0, `search: ${JSON.stringify(s)}`);
  s = structured(await call("list_memories", { limit: 10 }), "list_memories");
  check(s.results.length === 1 && s.next_cursor === null, `list_memories: ${JSON.stringify(s)}`);
  // A fact the agent stored is in the context it retrieves and in the profile.
  s = structured(await call("retrieve_memory", { query: "Which units does the user prefer?" }), "retrieve_memory");
  check(s.context.includes("## Facts about the user\n") && s.context.includes("Prefers metric units") &&
        s.user_facts.length === 1, `retrieve_memory after add_fact: ${JSON.stringify(s)}`);
  s = structured(await call("get_user_profile", {}), "get_user_profile");
  check(JSON.stringify(s.user_facts) === JSON.stringify(["Prefers metric units"]),
        `get_user_profile after add_fact: ${JSON.stringify(s)}`);
  s = structured(await call("update_memory", { id, text: "Prefers metric units and Celsius" }), "update_memory");
  check(s.version === 2 && s.memory.includes("Celsius"), `update_memory: ${JSON.stringify(s)}`);
  s = structured(await call("retrieve_memory", { query: "Which units does the user prefer?" }), "retrieve_memory");
  check(s.context.includes("Prefers metric units and Celsius"), `retrieve_memory after update: ${JSON.stringify(s)}`);
  s = structured(await call("delete_memory", { id }), "delete_memory");
  check(s.deleted === true && s.id === id, `delete_memory: ${JSON.stringify(s)}`);
  s = structured(await call("retrieve_memory", { query: "Which units does the user prefer?" }), "retrieve_memory");
  check(!s.context.includes("metric") && s.user_facts.length === 0, `retrieve_memory after delete: ${JSON.stringify(s)}`);
  s = structured(await call("list_memories", {}), "list_memories (after delete)");
  check(s.results.length === 0, `list after delete: ${JSON.stringify(s)}`);
  s = structured(await call("memory_health", {}), "memory_health");
  check(typeof s.overall === "string" && typeof s.green === "boolean", `memory_health: ${JSON.stringify(s)}`);
  check(s.stats?.turns_admitted === 1, `retrieve_memory admitted nothing: ${JSON.stringify(s.stats)}`);

  // Tool-level problems: results with isError and an actionable message.
  let r = await call("delete_memory", { id });
  check(r.isError === true && /not found/.test(r.content[0].text), `delete twice: ${JSON.stringify(r)}`);
  r = await call("retrieve_memory", {});
  check(r.isError === true && /query/.test(r.content[0].text), `missing query: ${JSON.stringify(r)}`);
  exercised.push("isError results");
  // Protocol problems: JSON-RPC errors.
  try {
    await call("no_such_tool", {});
    check(false, "unknown tool accepted");
  } catch (e) {
    check(e.code === -32602, `unknown tool: code ${e.code} ${e.message}`);
  }
  exercised.push("unknown tool -> -32602");
} catch (e) {
  failures.push(`exception: ${e.stack || e}`);
}

const proc = transport._process;
const exited = proc ? new Promise((resolve) => proc.once("exit", (code) => resolve(code))) : Promise.resolve(0);
await client.close();
const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 5000).unref())]);
check(code === 0, `server exit on stdin EOF: ${code}`);
exercised.push("exit 0 on EOF");
fs.rmSync(home, { recursive: true, force: true });

if (failures.length) {
  console.error("FAILED:\n  " + failures.join("\n  ") + "\nserver stderr:\n" + stderr);
  process.exit(1);
}
console.log(`ok: MCP SDK client exercised ${exercised.join(", ")}`);
