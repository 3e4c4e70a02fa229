// The previous generation of the official `mem0ai` MemoryClient (npm 2.x; Python's
// mem0ai 1.x calls the same routes) against a live `engram serve`: it adds on
// POST /v1/memories/, searches on /v1 or /v2/memories/search/ and lists on GET
// /v1/memories/ or POST /v2/memories/, so code pinned to it works by changing
// the host and the key, like code written for 3.x. Two tenants with the same
// user_id, identities at the top level and in filters, paging, every by-id
// call, and the client's error classes. Usage: node mem0_earlier_test.mjs ENGRAM
process.env.MEM0_TELEMETRY = "false";  // before the client module is evaluated
import { startServer, checker } from "../clients/engram_server.mjs";

const { default: MemoryClient } = await import("mem0ai");

const binary = process.argv[2] || process.env.ENGRAM_BINARY;
const t = checker("mem0ai 2.x client");
const srv = await startServer(binary, {
  keys: [
    { tenant: "acme", role: "write" },
    { tenant: "globex", role: "write" },
  ],
});
const host = `${srv.url}/mem0`;
const acme = new MemoryClient({ apiKey: srv.keys[0], host });
const globex = new MemoryClient({ apiKey: srv.keys[1], host });
const { check, rejects } = t;

try {
  await acme.ping();

  const added = await acme.add(
    [
      { role: "user", content: "I love hiking in the Alps" },
      { role: "assistant", content: "That sounds wonderful" },
    ],
    { user_id: "alice", infer: false, metadata: { category: "travel" } },
  );
  check(Array.isArray(added) && added.length === 2 && added.every((m) => m.event === "ADD" && m.id),
        `add answers the events: ${JSON.stringify(added)}`);
  const food = await acme.add([{ role: "user", content: "My favourite food is ramen" }],
                              { user_id: "alice", infer: false, metadata: { category: "food" } });
  const ramenId = food[0].id;
  await acme.add([{ role: "user", content: "Booked a flight to Tokyo for March" }],
                 { user_id: "alice", agent_id: "travel-bot", infer: false });
  const inferred = await acme.add([{ role: "user", content: "I work as a nurse in Lyon" }],
                                  { user_id: "alice", output_format: "v1.1" });
  check(Array.isArray(inferred.results) && inferred.results.length >= 1 && inferred.results[0].memory,
        `output_format v1.1 wraps the events in results: ${JSON.stringify(inferred)}`);
  await globex.add([{ role: "user", content: "I love ramen and hate hiking" }], { user_id: "alice", infer: false });

  // search: v1 (the default) names the identities at the top level; v2 in filters.
  const found = await acme.search("what food does she like", { user_id: "alice", top_k: 3 });
  check(Array.isArray(found) && found.length > 0 && found[0].memory.includes("ramen"),
        `a v1 search answers a list, ramen first: ${JSON.stringify(found)}`);
  check(!found.some((m) => m.memory.includes("hate hiking")), "acme never sees globex's alice");
  const v2 = await acme.search("ramen", { api_version: "v2", filters: { user_id: "alice" }, top_k: 1,
                                          output_format: "v1.1" });
  check(v2.results?.length === 1 && v2.results[0].memory.includes("ramen") && v2.results[0].user_id === "alice",
        `a v2 search with output_format v1.1: ${JSON.stringify(v2)}`);
  const theirs = await globex.search("hiking", { user_id: "alice" });
  check(theirs.length === 1 && theirs[0].memory.includes("hate hiking"), "globex sees only its own alice");

  // getAll: v1 (GET, identities in the query) and v2 (POST, filters), whole and in pages.
  const all = await acme.getAll({ user_id: "alice" });
  check(Array.isArray(all) && all.length === 5, `a v1 getAll lists alice's memories (the agent's too): ${all.length}`);
  const agentOnly = await acme.getAll({ user_id: "alice", agent_id: "travel-bot" });
  check(agentOnly.length === 1 && agentOnly[0].agent_id === "travel-bot", "the agent narrows a v1 list");
  const travel = await acme.getAll({ api_version: "v2",
                                     filters: { AND: [{ user_id: "alice" }, { category: "travel" }] } });
  check(Array.isArray(travel) && travel.length === 2 && travel.every((m) => m.metadata?.category === "travel"),
        `a v2 metadata filter: ${JSON.stringify(travel)}`);
  const page1 = await acme.getAll({ api_version: "v2", filters: { user_id: "alice" }, page: 1, page_size: 2 });
  const page3 = await acme.getAll({ user_id: "alice", page: 3, page_size: 2 });
  check(page1.count === 5 && page1.results.length === 2 && page1.next && page1.previous === null,
        `a v2 page: ${JSON.stringify(page1)}`);
  check(page3.count === 5 && page3.results.length === 1 && page3.next === null, `a v1 page: ${JSON.stringify(page3)}`);

  // By id, history, delete, deleteAll, users.
  check((await acme.get(ramenId)).memory === "My favourite food is ramen", "get by id");
  await acme.update(ramenId, { text: "My favourite food is udon" });
  check((await acme.get(ramenId)).memory === "My favourite food is udon", "update changes the text");
  const history = await acme.history(ramenId);
  check(history.length === 2 && history[1].old_memory?.includes("ramen") && history[1].new_memory?.includes("udon"),
        `history: ${JSON.stringify(history.map((h) => [h.event, h.old_memory, h.new_memory]))}`);
  await rejects(globex.get(ramenId), "another tenant's id", (e) => e.name === "MemoryNotFoundError");
  await acme.delete(ramenId);
  await rejects(acme.get(ramenId), "a deleted memory", (e) => e.name === "MemoryNotFoundError");
  const users = await acme.users();
  const names = (users.results || []).map((u) => `${u.type}:${u.name}`).sort();
  check(names.includes("user:alice") && names.includes("agent:travel-bot"), `users: ${JSON.stringify(names)}`);
  await acme.deleteAll({ user_id: "alice" });
  check((await acme.getAll({ user_id: "alice" })).length === 0, "deleteAll empties alice");
  check((await globex.getAll({ user_id: "alice" })).length === 1, "and leaves globex's alice");

  // Errors the client maps to its classes.
  await rejects(acme.search("x", {}), "search needs an identity", (e) => e.name === "ValidationError");
  await rejects(acme.search("x", { user_id: "alice", filters: { user_id: "bob" } }), "two users in one search",
                (e) => e.name === "ValidationError");
  await rejects(acme.add([{ role: "user", content: "x" }], { user_id: "u", app_id: "a" }), "app_id is unsupported",
                (e) => /app_id/.test(e.message));
  const bad = new MemoryClient({ apiKey: "not-a-key", host });
  await rejects(bad.getAll({ user_id: "alice" }), "a bad key",
                (e) => e.name === "AuthenticationError" || /401|unauthori/i.test(e.message));
} catch (e) {
  check(false, `unexpected error: ${e?.name}: ${e?.message}\n${srv.output()}`);
} finally {
  await srv.stop();
}
process.exit(t.finish());
