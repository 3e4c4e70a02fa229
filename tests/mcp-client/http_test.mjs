// Drives the MCP endpoint of `engram serve` (POST /mcp, the Streamable HTTP
// transport, stateless) with the official MCP TypeScript SDK's HTTP client:
// the API key in the Authorization header, the user on the URL or in a
// header; every tool once over HTTP, the memory landing in the key's tenant
// (read back through the REST API), a read-only key that gets the reading
// tools alone, tenants that do not see each other, a key limited to other
// users, no key, no user, the tenant's quota on the writing tools, and the
// transport's edges (GET and DELETE 405, a notification 202, a protocol
// version the server does not speak 400).
// Usage: node http_test.mjs /path/to/engram
import { startServer, checker } from "../clients/engram_server.mjs";

let Client, StreamableHTTPClientTransport;
try {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} catch (e) {
  console.error(`FAIL: @modelcontextprotocol/sdk is not installed (run: npm ci --prefix tests/mcp-client): ${e.message}`);
  process.exit(1);
}

const binary = process.argv[2] || process.env.ENGRAM_BINARY;
const t = checker("mcp over http");
const { check, rejects } = t;

const srv = await startServer(binary, {
  keys: [
    { tenant: "acme", role: "write" },
    { tenant: "acme", role: "read" },
    { tenant: "acme", role: "write", users: ["alice"] },
    { tenant: "globex", role: "write" },
    { tenant: "small", role: "write" },
  ],
  args: ["--tenant-quota", "small:memories=1"],
});
const [writeKey, readKey, aliceOnlyKey, otherTenantKey, smallKey] = srv.keys;

const clients = [];
async function connect(key, { query = "user=alice&assistant=cursor", headers = {} } = {}) {
  const url = new URL(`${srv.url}/mcp${query ? "?" + query : ""}`);
  const auth = key ? { Authorization: `Bearer ${key}` } : {};
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...auth, ...headers } } });
  const client = new Client({ name: "engram-http-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}
const call = (client, name, args = {}) => client.callTool({ name, arguments: args });
const ok = (result, what) => {
  check(result.isError !== true, `${what}: isError ${JSON.stringify(result.content)}`);
  return result.structuredContent ?? {};
};
async function rest(path, key) {
  const r = await fetch(`${srv.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: r.status, json: await r.json() };
}
async function raw(method, { body, headers = {}, query = "user=alice" } = {}) {
  const r = await fetch(`${srv.url}/mcp?${query}`, {
    method,
    headers: { Authorization: `Bearer ${writeKey}`, "Content-Type": "application/json",
               Accept: "application/json, text/event-stream", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, type: r.headers.get("content-type") ?? "" };
}

try {
  // A write key, the user on the URL: every tool, the memory in tenant acme.
  const alice = await connect(writeKey);
  check(alice.getServerVersion()?.name === "engram", `serverInfo: ${JSON.stringify(alice.getServerVersion())}`);
  check(/user 'alice'/.test(alice.getInstructions() ?? ""), `instructions: ${alice.getInstructions()}`);
  await alice.ping();
  const { tools } = await alice.listTools();
  check(tools.length === 9, `tools: ${tools.map((x) => x.name)}`);
  let s = ok(await call(alice, "add_memory", { user_input: "My dog is called Rex.", agent_response: "Lovely name." }),
             "add_memory");
  check(s.turn_id > 0, `add_memory: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "add_fact", { text: "Allergic to peanuts" }), "add_fact");
  const id = s.results?.[0]?.id;
  check(/^m_[0-9a-f]{16}$/.test(id ?? ""), `add_fact: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "retrieve_memory", { query: "What is my dog called?" }), "retrieve_memory");
  check(s.context.includes("Rex"), `retrieve_memory: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "search_memories", { query: "peanuts" }), "search_memories");
  check(s.results?.[0]?.id === id, `search_memories: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "update_memory", { id, text: "Allergic to peanuts and cashews" }), "update_memory");
  check(s.version === 2, `update_memory: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "list_memories", {}), "list_memories");
  check(s.results?.length === 1, `list_memories: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "get_user_profile", {}), "get_user_profile");
  check(Array.isArray(s.user_facts), `get_user_profile: ${JSON.stringify(s)}`);
  s = ok(await call(alice, "memory_health", {}), "memory_health");
  check(typeof s.overall === "string", `memory_health: ${JSON.stringify(s)}`);
  const listed = await rest("/v1/memories?user=alice&agent=cursor", writeKey);
  check(listed.status === 200 && JSON.stringify(listed.json).includes("cashews"),
        `the fact is in tenant acme, user alice, agent cursor: ${JSON.stringify(listed.json)}`);
  const turns = await rest("/v1/turns?user=alice&assistant=cursor", writeKey);
  check(JSON.stringify(turns.json).includes("Rex"), `the turn is in acme/alice/cursor: ${JSON.stringify(turns.json)}`);
  let r = await call(alice, "update_memory", { id: "m_0000000000000000", text: "x" });
  check(r.isError === true && /not found/i.test(r.content[0].text), `unknown id: ${JSON.stringify(r)}`);

  // The user in a header instead (a client that sets headers but not URLs).
  const bob = await connect(writeKey, { query: "", headers: { "X-Engram-User": "bob" } });
  s = ok(await call(bob, "list_memories", {}), "bob list");
  check(s.results?.length === 0, `bob sees none of alice's memories: ${JSON.stringify(s)}`);

  // A read key: the reading tools alone; a writing one is refused with the reason.
  const reader = await connect(readKey);
  const readTools = (await reader.listTools()).tools.map((x) => x.name).sort();
  check(JSON.stringify(readTools) === JSON.stringify(["get_user_profile", "list_memories", "memory_health",
                                                      "retrieve_memory", "search_memories"]),
        `read-only tools: ${readTools}`);
  check(!/add_memory/.test(reader.getInstructions() ?? ""), `read-only instructions: ${reader.getInstructions()}`);
  r = await call(reader, "add_fact", { text: "Likes tea" });
  check(r.isError === true && /may only read/.test(r.content[0].text), `read key writing: ${JSON.stringify(r)}`);
  s = ok(await call(reader, "search_memories", { query: "peanuts" }), "reader search");
  check(s.results?.length === 1, `the read key reads alice: ${JSON.stringify(s)}`);

  // Another tenant's key, the same user name: nothing of acme.
  const other = await connect(otherTenantKey);
  s = ok(await call(other, "search_memories", { query: "peanuts" }), "other tenant search");
  check(s.results?.length === 0, `tenants apart (search): ${JSON.stringify(s)}`);
  s = ok(await call(other, "retrieve_memory", { query: "What is my dog called?" }), "other tenant retrieve");
  check(!s.context.includes("Rex"), `tenants apart (retrieve): ${JSON.stringify(s)}`);

  // Refused before any tool: a key limited to other users, no key, no user.
  await rejects(connect(aliceOnlyKey, { query: "user=bob" }), "a user outside the key",
                (e) => e.code === 403 || /403|may not access/.test(e.message));
  const aliceOnly = await connect(aliceOnlyKey);
  ok(await call(aliceOnly, "list_memories", {}), "the limited key on its own user");
  await rejects(connect(null), "no key", (e) => e.code === 401 || /401|API key/.test(e.message));
  await rejects(connect(writeKey, { query: "" }), "no user", (e) => e.code === 400 || /X-Engram-User/.test(e.message));
  await rejects(connect(writeKey, { query: "user=alice&tenant=globex" }), "a parameter /mcp does not take",
                (e) => /tenant/.test(e.message));

  // The tenant's quota holds for the writing tools.
  const small = await connect(smallKey);
  ok(await call(small, "add_fact", { text: "First fact" }), "first fact within the quota");
  r = await call(small, "add_fact", { text: "Second fact" });
  check(r.isError === true && /quota/i.test(r.content[0].text), `over the quota: ${JSON.stringify(r)}`);
  s = ok(await call(small, "list_memories", {}), "list within the quota");
  check(s.results?.length === 1, `nothing stored over the quota: ${JSON.stringify(s)}`);

  // The transport's edges.
  let x = await raw("GET");
  check(x.status === 405, `GET /mcp: ${x.status}`);
  x = await raw("DELETE");
  check(x.status === 405, `DELETE /mcp: ${x.status}`);
  x = await raw("POST", { body: { jsonrpc: "2.0", method: "notifications/initialized" } });
  check(x.status === 202 && x.text === "", `a notification: ${x.status} ${x.text}`);
  x = await raw("POST", { body: { jsonrpc: "2.0", id: 7, method: "tools/list" }, headers: { "MCP-Protocol-Version": "1999-01-01" } });
  check(x.status === 400 && /1999-01-01/.test(x.text), `unsupported protocol version: ${x.status} ${x.text}`);
  x = await raw("POST", { body: { jsonrpc: "2.0", id: 8, method: "no/such" } });
  check(x.status === 200 && JSON.parse(x.text).error?.code === -32601 && JSON.parse(x.text).id === 8,
        `an unknown method: ${x.status} ${x.text}`);
  x = await raw("POST", { body: [{ jsonrpc: "2.0", id: 9, method: "ping" }] });
  check(x.status === 400 && x.type.startsWith("application/json"), `a batch: ${x.status} ${x.text}`);
} catch (e) {
  check(false, `unexpected: ${e?.name}: ${e?.message}\n${e?.stack}\nserver output:\n${srv.output()}`);
} finally {
  for (const c of clients) await c.close().catch(() => {});
  await srv.stop();
}
process.exit(t.finish());
