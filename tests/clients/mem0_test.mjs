// The official `mem0ai` MemoryClient against a live `engram serve` (host =
// engram + "/mem0", an engram API key): every call of the client's memory
// API, two tenants with the same user_id, pagination over 120 memories, a
// filter with AND/OR, batch calls, the client's error paths and the platform
// features engram answers with a clear 400. Usage: node mem0_test.mjs ENGRAM
process.env.MEM0_TELEMETRY = "false";  // before the client module is evaluated
import { startServer, checker } from "./engram_server.mjs";

const { default: MemoryClient } = await import("mem0ai");

const binary = process.argv[2] || process.env.ENGRAM_BINARY;
const t = checker("mem0ai client");
const srv = await startServer(binary, {
  keys: [
    { tenant: "acme", role: "write" },
    { tenant: "globex", role: "write" },
    { tenant: "acme", role: "read" },
  ],
});
const host = `${srv.url}/mem0`;
const acme = new MemoryClient({ apiKey: srv.keys[0], host });
const globex = new MemoryClient({ apiKey: srv.keys[1], host });
const reader = new MemoryClient({ apiKey: srv.keys[2], host });
const { check, rejects } = t;

try {
  await acme.ping();
  await globex.ping();

  // add: verbatim (infer false) and extracted (infer true), with metadata.
  const added = await acme.add(
    [
      { role: "user", content: "I love hiking in the Alps" },
      { role: "assistant", content: "That sounds wonderful" },
    ],
    { user_id: "alice", infer: false, metadata: { category: "travel" } },
  );
  check(Array.isArray(added) && added.length === 2, `add returns one result per message: ${JSON.stringify(added)}`);
  check(added.every((m) => typeof m.id === "string" && m.event === "ADD"), "add events are ADD with ids");
  const food = await acme.add([{ role: "user", content: "My favourite food is ramen" }], {
    userId: "alice",
    infer: false,
    metadata: { category: "food" },
  });
  const ramenId = food[0].id;
  await acme.add([{ role: "user", content: "I work as a nurse in Lyon" }], {
    user_id: "alice",
    metadata: { category: "work" },
  });
  // The client's timestamp is when it was said: a relative time is written as its date.
  const dated = await acme.add([{ role: "user", content: "I went to the dentist yesterday" }], {
    user_id: "alice",
    timestamp: Date.UTC(2025, 5, 10, 12) / 1000,
  });
  check(dated.length === 1 && dated[0].memory === "User went to the dentist on 9 June 2025.",
        `a relative time is dated by the timestamp: ${JSON.stringify(dated)}`);
  await acme.add([{ role: "user", content: "Booked a flight to Tokyo for March" }], {
    user_id: "alice",
    agent_id: "travel-bot",
    infer: false,
    metadata: { category: "travel" },
  });

  // The other tenant, same user id: a different person.
  await globex.add([{ role: "user", content: "I love ramen and hate hiking" }], { user_id: "alice", infer: false });

  // search: filters name the user; the tenant comes from the key.
  const found = await acme.search("what food does she like", { filters: { user_id: "alice" }, top_k: 5 });
  check(Array.isArray(found.results) && found.results.length > 0, `search finds memories: ${JSON.stringify(found)}`);
  check(found.results[0]?.memory?.includes("ramen"), `best hit is the ramen memory: ${found.results[0]?.memory}`);
  check(found.results.every((m) => typeof m.score === "number" && m.userId === "alice"), "hits have score, userId");
  check(!found.results.some((m) => m.memory.includes("hate hiking")), "acme never sees globex's alice");
  const other = await globex.search("hiking", { filters: { user_id: "alice" } });
  check(other.results.length === 1 && other.results[0].memory.includes("hate hiking"),
        `globex sees only its own alice: ${JSON.stringify(other.results.map((m) => m.memory))}`);
  check((await acme.search("ramen", { filters: { user_id: "alice" }, topK: 1 })).results.length === 1, "topK");

  // AND/OR over metadata, identities inside a top-level AND.
  const travelOrFood = await acme.getAll({
    filters: { AND: [{ user_id: "alice" }, { OR: [{ category: "travel" }, { category: "food" }] }] },
  });
  const cats = travelOrFood.results.map((m) => m.metadata?.category).sort();
  check(travelOrFood.count === 4 && JSON.stringify(cats) === JSON.stringify(["food", "travel", "travel", "travel"]),
        `AND/OR filter: ${travelOrFood.count} ${JSON.stringify(cats)}`);
  const agentOnly = await acme.getAll({ filters: { AND: [{ user_id: "alice" }, { agent_id: "travel-bot" }] } });
  check(agentOnly.count === 1 && agentOnly.results[0].agentId === "travel-bot", "agent_id narrows the user");
  await rejects(acme.getAll({ filters: { OR: [{ user_id: "alice" }, { user_id: "bob" }] } }),
                "identities under OR are refused", (e) => e.name === "ValidationError" && /top-level AND/.test(e.message));

  // get / update / history / delete.
  const one = await acme.get(ramenId);
  check(one.id === ramenId && one.memory === "My favourite food is ramen" && one.userId === "alice", "get");
  check(one.metadata?.category === "food" && Array.isArray(one.categories), "get: metadata and categories");
  const updated = await acme.update(ramenId, { text: "My favourite food is udon" });
  check(updated.memory === "My favourite food is udon", `update: ${JSON.stringify(updated)}`);
  const hist = await acme.history(ramenId);
  check(Array.isArray(hist) && hist.length >= 2, `history has the add and the update: ${JSON.stringify(hist)}`);
  check(hist[0].event === "ADD" && hist.some((h) => h.event === "UPDATE" && h.newMemory?.includes("udon")),
        "history events");
  await rejects(globex.get(ramenId), "another tenant's memory id is not found", (e) => e.name === "MemoryNotFoundError");
  await rejects(reader.update(ramenId, { text: "x" }), "a read key may not update",
                (e) => e.name === "AuthenticationError");
  const gone = await acme.delete(ramenId);
  check(typeof gone.message === "string", "delete answers a message");
  await rejects(acme.get(ramenId), "a deleted memory is not found", (e) => e.name === "MemoryNotFoundError");
  const after = await acme.history(ramenId);
  check(Array.isArray(after) && after.some((h) => h.event === "DELETE"),
        `a deleted memory keeps its history, the delete included: ${JSON.stringify(after)}`);
  await rejects(globex.history(ramenId), "another tenant's deleted memory has no history to it",
                (e) => e.name === "MemoryNotFoundError");
  await rejects(acme.get("m_0000000000000000"), "unknown id", (e) => e.name === "MemoryNotFoundError");

  // Pagination over 120 memories of one user.
  const many = [];
  for (let i = 0; i < 120; i++) many.push({ role: "user", content: `Numbered note ${i} about topic ${i * 7919}` });
  const bulk = await acme.add(many, { user_id: "bob", infer: false });
  check(bulk.length === 120, `120 memories added: ${bulk.length}`);
  const seen = new Set();
  let pages = 0;
  for (let page = 1; ; page++) {
    const p = await acme.getAll({ filters: { user_id: "bob" }, page, pageSize: 50 });
    pages++;
    check(p.count === 120, `count on page ${page}: ${p.count}`);
    for (const m of p.results) seen.add(m.id);
    check(p.results.length === (page < 3 ? 50 : 20), `page ${page} size ${p.results.length}`);
    check((page === 1) === (p.previous === null), `previous on page ${page}: ${p.previous}`);
    if (!p.next) break;
    check(p.next.includes(`page=${page + 1}`), `next names the next page: ${p.next}`);
    if (pages > 5) break;
  }
  check(pages === 3 && seen.size === 120, `3 pages with 120 distinct memories: ${pages} ${seen.size}`);

  // batch update / delete.
  const ids = [...seen].slice(0, 3);
  const before = (await acme.get(ids[0])).memory;
  // A batch is all or nothing: an unknown id, an id named twice or an
  // empty text anywhere in it changes no memory, and the error names the entry.
  await rejects(acme.batchUpdate([{ memoryId: ids[0], text: "half done" }, { memoryId: "m_0000000000000000", text: "x" }]),
                "a batch update with an unknown id is refused", (e) => /memories\[1\]/.test(e.message));
  await rejects(acme.batchUpdate([{ memoryId: ids[0], text: "once" }, { memoryId: ids[0], text: "twice" }]),
                "a batch update naming one id twice is refused", (e) => e.name === "ValidationError" && /twice/.test(e.message));
  await rejects(acme.batchUpdate([{ memoryId: ids[0], text: "fine" }, { memoryId: ids[1], text: "   " }]),
                "a batch update with an empty text is refused", (e) => e.name === "ValidationError" && /memories\[1\]/.test(e.message));
  check((await acme.get(ids[0])).memory === before, "a refused batch update changed nothing");
  check((await acme.history(ids[0])).length === 1, "a refused batch update wrote no history");
  await rejects(acme.batchDelete([ids[0], ids[1], "m_0000000000000000"]), "a batch delete with an unknown id is refused",
                (e) => /memories\[2\]/.test(e.message));
  check((await acme.getAll({ filters: { user_id: "bob" } })).count === 120, "a refused batch delete deleted nothing");
  await acme.batchUpdate(ids.map((id) => ({ memoryId: id, text: `rewritten ${id}` })));
  check((await acme.get(ids[0])).memory === `rewritten ${ids[0]}`, "batchUpdate changed the text");
  await acme.batchDelete(ids);
  check((await acme.getAll({ filters: { user_id: "bob" } })).count === 117, "batchDelete removed three");

  // users(): every identity of the tenant with memories.
  const users = await acme.users();
  const names = users.results.map((u) => `${u.type}:${u.name}`).sort();
  check(JSON.stringify(names) === JSON.stringify(["agent:travel-bot", "user:alice", "user:bob"]),
        `users: ${JSON.stringify(names)}`);
  check(users.results.find((u) => u.name === "bob")?.totalMemories === 117, "users: total memories");
  check((await globex.users()).results.length === 1, "users of the other tenant");

  // deleteAll (query identities), deleteUsers.
  await acme.deleteAll({ user_id: "bob" });
  check((await acme.getAll({ filters: { user_id: "bob" } })).count === 0, "deleteAll emptied bob");
  await acme.deleteUsers({ userId: "alice" });
  check((await acme.getAll({ filters: { user_id: "alice" } })).count === 0, "deleteUsers emptied alice");
  check((await globex.getAll({ filters: { user_id: "alice" } })).count === 1, "the other tenant's alice is intact");
  // A user id with a '/' (or '?', '%', a space) is one path segment once the
  // client encodes it: deleteUsers reaches exactly that user.
  for (const odd of ["org/ann", "org", "a?b %2F c"]) {
    await acme.add([{ role: "user", content: `Note of ${odd}` }], { user_id: odd, infer: false });
  }
  await acme.deleteUsers({ userId: "org/ann" });
  check((await acme.getAll({ filters: { user_id: "org/ann" } })).count === 0, "deleteUsers emptied org/ann");
  check((await acme.getAll({ filters: { user_id: "org" } })).count === 1, "deleteUsers of org/ann left org");
  await acme.deleteUsers({ userId: "a?b %2F c" });
  check((await acme.getAll({ filters: { user_id: "a?b %2F c" } })).count === 0, "deleteUsers emptied a?b %2F c");
  check((await acme.getAll({ filters: { user_id: "org" } })).count === 1, "deleteUsers of a?b %2F c left org");
  await acme.deleteUsers({ userId: "org" });

  // Error paths: a bad key, unsupported platform features.
  const bad = new MemoryClient({ apiKey: "egk_000000000000_not-a-key", host });
  await rejects(bad.add([{ role: "user", content: "x" }], { user_id: "u" }), "bad key",
                (e) => e.name === "AuthenticationError");
  await rejects(acme.feedback({ memoryId: "m_1", feedback: "POSITIVE" }), "feedback is unsupported",
                (e) => e.name === "ValidationError" && /not supported/.test(e.message));
  await rejects(acme.createMemoryExport({ schema: {}, filters: { user_id: "alice" } }), "exports are unsupported",
                (e) => e.name === "ValidationError" && /not supported/.test(e.message));
  await rejects(acme.add([{ role: "user", content: "x" }], { user_id: "u", app_id: "a" }), "app_id is unsupported",
                (e) => e.name === "ValidationError" && /app_id/.test(e.message));
  await rejects(acme.search("x", { filters: {} }), "search needs an identity", (e) => e.name === "ValidationError");
} catch (e) {
  check(false, `unexpected: ${e?.name}: ${e?.message} ${e?.cause ?? ""}\n${e?.stack}\nserver output:\n${srv.output()}`);
} finally {
  await srv.stop();
}
process.exit(t.finish());
