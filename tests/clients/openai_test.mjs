// The official `openai` client against engram's memory proxy (baseURL =
// engram + "/v1", an engram key), with a fake OpenAI-compatible model server
// on loopback as the upstream: memory added to what the model receives,
// non-streamed and streamed answers admitted with their receipts, tools
// passed through, upstream 500 and timeout (nothing admitted, OpenAI's error
// shape), and a client that goes away mid-stream (nothing admitted); the
// same for the Responses API (client.responses.create and .stream), whose
// memory follows the request's instructions.
// Usage: node openai_test.mjs ENGRAM
import http from "node:http";
import { isDeepStrictEqual } from "node:util";
import { startServer, checker } from "./engram_server.mjs";

const { default: OpenAI } = await import("openai");

const binary = process.argv[2] || process.env.ENGRAM_BINARY;
const t = checker("openai client");
const { check, rejects } = t;

// --- The fake model server: answers by markers in the last user message. ---
const received = [];
const UPSTREAM_KEY = "sk-upstream-secret";
function lastUser(body) {
  if (typeof body.input === "string") return body.input;
  const users = (body.messages || body.input || []).filter((m) => m.role === "user");
  const c = users.length ? users[users.length - 1].content : "";
  return typeof c === "string" ? c : c.map((p) => p.text ?? "").join("\n");
}
function completion(content, extra = {}, finish = extra.tool_calls ? "tool_calls" : "stop") {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1,
    model: "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content, ...extra }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}
function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model: "fake-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The Responses API of the fake: a response object, and its stream of typed
// events as OpenAI sends them.
function responseObject(text, status = "completed", extraOutput = []) {
  const output = text === null ? [] : [{
    id: "msg_fake", type: "message", status: "completed", role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  }];
  return {
    id: "resp_fake", object: "response", created_at: 1, status, model: "fake-model",
    output: [...output, ...extraOutput], usage: { input_tokens: 12, output_tokens: 6, total_tokens: 18 },
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    error: null, instructions: null, tools: [], parallel_tool_calls: true, tool_choice: "auto", metadata: {},
  };
}
async function streamResponse(res, q, answer) {
  let seq = 0;
  const send = (type, fields) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  send("response.created", { response: { ...responseObject(null, "in_progress"), usage: null } });
  send("response.in_progress", { response: { ...responseObject(null, "in_progress"), usage: null } });
  const item = { id: "msg_fake", type: "message", status: "in_progress", role: "assistant", content: [] };
  send("response.output_item.added", { output_index: 0, item });
  send("response.content_part.added", { item_id: "msg_fake", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  const words = answer.split(" ");
  for (let i = 0; i < words.length; i++) {
    if (q.includes("STALL") && i === 1) await sleep(1500);
    if (res.destroyed) return;
    send("response.output_text.delta", { item_id: "msg_fake", output_index: 0, content_index: 0, delta: (i ? " " : "") + words[i], logprobs: [] });
    if (q.includes("STALL")) await sleep(200);
  }
  send("response.output_text.done", { item_id: "msg_fake", output_index: 0, content_index: 0, text: answer, logprobs: [] });
  send("response.content_part.done", { item_id: "msg_fake", output_index: 0, content_index: 0, part: { type: "output_text", text: answer, annotations: [] } });
  send("response.output_item.done", { output_index: 0, item: responseObject(answer).output[0] });
  const status = q.includes("CUTOFF") ? "incomplete" : "completed";
  send(`response.${status}`, { response: responseObject(answer, status) });
  res.end();
}
function respond(req, res, body, q) {
  if (!body.stream) {
    let reply = responseObject(`Answer to: ${q}`, q.includes("CUTOFF") ? "incomplete" : "completed");
    if (body.tools) {
      reply = responseObject(null, "completed", [{ id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: body.tools[0].name, arguments: "{\"city\":\"Lyon\"}" }]);
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(reply));
    return;
  }
  return streamResponse(res, q, `Answer to: ${q}`);
}

const upstream = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", async () => {
    const body = JSON.parse(raw || "{}");
    received.push({ body, auth: req.headers.authorization, path: req.url });
    const q = lastUser(body);
    if (q.includes("FAIL500")) {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the fake model broke", type: "server_error", code: "boom" } }));
      return;
    }
    if (q.includes("SLOW")) await sleep(6000);
    if (req.url.endsWith("/responses")) return respond(req, res, body, q);
    if (body.tools) {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(completion(null, {
        tool_calls: [{ id: "call_1", type: "function", function: { name: body.tools[0].function.name, arguments: "{\"city\":\"Lyon\"}" } }],
      })));
      return;
    }
    const answer = `Answer to: ${q}`;
    if (!body.stream) {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(completion(answer, {}, q.includes("CUTOFF") ? "length" : "stop")));
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.write(chunk({ role: "assistant", content: "" }));
    const words = answer.split(" ");
    for (let i = 0; i < words.length; i++) {
      if (q.includes("STALL") && i === 1) await sleep(1500);
      if (res.destroyed) return;
      res.write(chunk({ content: (i ? " " : "") + words[i] }));
      if (q.includes("STALL")) await sleep(200);
    }
    res.write(chunk({}, q.includes("CUTOFF") ? "length" : "stop"));
    res.end("data: [DONE]\n\n");
  });
});
await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}/v1`;

const srv = await startServer(binary, {
  keys: [{ tenant: "acme", role: "write" }, { tenant: "acme", role: "write", users: ["alice"] }, { tenant: "acme", role: "operator" }],
  toml: `[llm]\nbase_url = "${upstreamUrl}"\nmodel = "fake-model"\napi_key = "${UPSTREAM_KEY}"\ntimeout_s = 2\nmax_retries = 0\n`,
});
const key = srv.keys[0];
const client = new OpenAI({ apiKey: key, baseURL: `${srv.url}/v1`, maxRetries: 0, timeout: 30000 });

async function rest(method, path, body, k = key) {
  const r = await fetch(`${srv.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null, text };
}
// A key limited to the user alice.
const limitedClient = () => new OpenAI({ apiKey: srv.keys[1], baseURL: `${srv.url}/v1`, maxRetries: 0 });
async function turnsOf(user) {
  const r = await rest("GET", `/v1/turns?user=${user}&limit=1000`);
  return r.json?.turns ?? r.json?.results ?? [];
}

try {
  // Memory to find: earlier conversations of alice.
  const seeded = await rest("POST", "/v1/turns", {
    user: "alice",
    turns: [
      { user_text: "My favourite food is ramen, especially tonkotsu.", assistant_text: "Noted, ramen it is." },
      { user_text: "I live in Lyon with my cat Miso.", assistant_text: "Lyon is lovely." },
    ],
  });
  check(seeded.status === 201 || seeded.status === 200, `seed turns: ${seeded.status} ${seeded.text}`);

  // /v1/models lists the configured model.
  const models = await client.models.list();
  check(models.data.length === 1 && models.data[0].id === "fake-model", `models: ${JSON.stringify(models.data)}`);

  // Non-streamed, with memory.
  const before = (await turnsOf("alice")).length;
  const { data, response } = await client.chat.completions
    .create({ model: "fake-model", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "What food do I like?" }], user: "alice", temperature: 0.3, response_format: { type: "text" } })
    .withResponse();
  check(data.choices[0].message.content === "Answer to: What food do I like?", `answer: ${JSON.stringify(data)}`);
  const sent = received[received.length - 1];
  check(sent.auth === `Bearer ${UPSTREAM_KEY}`, "the upstream gets engram's model key, never the caller's");
  check(sent.body.temperature === 0.3 && sent.body.response_format?.type === "text" && sent.body.user === "alice",
        `caller parameters untouched: ${JSON.stringify(sent.body)}`);
  const roles = sent.body.messages.map((m) => m.role);
  check(JSON.stringify(roles) === JSON.stringify(["system", "system", "user"]), `memory after the caller's system message: ${roles}`);
  check(sent.body.messages[1].content.includes("ramen"), `the memory the model saw: ${sent.body.messages[1].content}`);
  check(Number(response.headers.get("x-engram-memory-tokens")) > 0, "X-Engram-Memory-Tokens");
  check(/(stm|page|turn)[^,]*:\d+@\d+/.test(response.headers.get("x-engram-memory-items") || ""),
        `X-Engram-Memory-Items: ${response.headers.get("x-engram-memory-items")}`);
  const after = await turnsOf("alice");
  check(after.length === before + 1, `the exchange was admitted: ${before} -> ${after.length}`);
  check(JSON.stringify(after[after.length - 1]).includes("What food do I like?"), "admitted question");

  // Streamed, through the X-Engram-User header.
  const stream = await client.chat.completions.create(
    { model: "fake-model", messages: [{ role: "user", content: "Where do I live?" }], stream: true },
    { headers: { "X-Engram-User": "alice" } },
  );
  let text = "";
  let chunks = 0;
  for await (const part of stream) {
    chunks++;
    text += part.choices[0]?.delta?.content ?? "";
  }
  check(text === "Answer to: Where do I live?" && chunks >= 4, `streamed answer: ${chunks} chunks "${text}"`);
  check(received[received.length - 1].body.messages[0].content.includes("Lyon"), "the streamed request carried memory");
  const afterStream = await turnsOf("alice");
  check(afterStream.length === after.length + 1, "the streamed exchange was admitted");

  // No user: passed through without memory, and the header says so.
  const plain = await client.chat.completions
    .create({ model: "fake-model", messages: [{ role: "user", content: "Hello there" }] })
    .withResponse();
  check(/^off/.test(plain.response.headers.get("x-engram-memory") || ""), "X-Engram-Memory: off");
  check(received[received.length - 1].body.messages.length === 1, "no memory without a user");

  // Tools pass through; an answer without text is not admitted.
  const tools = [{ type: "function", function: { name: "weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
  const called = await client.chat.completions.create({
    model: "fake-model", messages: [{ role: "user", content: "Weather where I live?" }], tools, tool_choice: "auto", user: "alice",
  });
  check(called.choices[0].message.tool_calls?.[0]?.function?.name === "weather", `tool call returned: ${JSON.stringify(called)}`);
  check(isDeepStrictEqual(received[received.length - 1].body.tools, tools) &&
        received[received.length - 1].body.tool_choice === "auto", "tools passed through unchanged");
  check((await turnsOf("alice")).length === afterStream.length, "a tool-call answer is not admitted");
  // An answer cut off at the model's token limit comes back as it is and is not admitted.
  const cut1 = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "Tell it all CUTOFF" }], user: "alice", max_tokens: 5 });
  check(cut1.choices[0].finish_reason === "length", `cut-off answer returned: ${JSON.stringify(cut1)}`);
  const cut2 = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "Stream it all CUTOFF" }], user: "alice", stream: true });
  for await (const _ of cut2);
  check((await turnsOf("alice")).length === afterStream.length, "answers cut off by the token limit are not admitted");

  // Upstream 500 and timeout: OpenAI's error shape, nothing admitted.
  await rejects(client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "FAIL500 now" }], user: "alice" }),
                "upstream 500", (e) => e.status === 500 && /fake model broke/.test(e.message));
  await rejects(client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "SLOW please" }], user: "alice" }),
                "upstream timeout", (e) => e.status === 504 && e.error?.code === "upstream_timeout");
  await rejects(client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "FAIL500 streamed" }], user: "alice", stream: true })
                  .then(async (s) => { for await (const _ of s); }),
                "upstream 500 while streaming", (e) => /HTTP 500/.test(e.message ?? ""));
  check((await turnsOf("alice")).length === afterStream.length, "failed answers are not admitted");

  // A client that goes away mid-stream: nothing admitted.
  const controller = new AbortController();
  const cut = await client.chat.completions.create(
    { model: "fake-model", messages: [{ role: "user", content: "STALL and then talk a lot more words here" }], user: "alice", stream: true },
    { signal: controller.signal },
  );
  try {
    for await (const part of cut) {
      if (part.choices[0]?.delta?.content) controller.abort();
    }
  } catch (e) {
    check(e.name === "AbortError" || /abort/i.test(e.message), `abort: ${e.name} ${e.message}`);
  }
  await sleep(4000);  // the fake finishes its answer; engram must not admit it
  check((await turnsOf("alice")).length === afterStream.length, "a cancelled stream is not admitted");

  // A key limited to other users may not name this one.
  await rejects(limitedClient().chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }], user: "bob" }),
                "a user outside the key", (e) => e.status === 403);

  // The Responses API, non-streamed: memory after the caller's instructions,
  // the input untouched, the answer admitted.
  const r0 = (await turnsOf("alice")).length;
  const resp = await client.responses
    .create({ model: "fake-model", input: "What food do I like?", instructions: "Be brief.", user: "alice", temperature: 0.2 })
    .withResponse();
  check(resp.data.output_text === "Answer to: What food do I like?", `responses answer: ${JSON.stringify(resp.data)}`);
  let sentR = received[received.length - 1];
  check(sentR.path === "/v1/responses", `forwarded to the endpoint's /responses: ${sentR.path}`);
  check(sentR.auth === `Bearer ${UPSTREAM_KEY}`, "responses: the upstream gets engram's model key");
  check(sentR.body.input === "What food do I like?" && sentR.body.temperature === 0.2 && sentR.body.user === "alice",
        `responses: caller parameters untouched: ${JSON.stringify(sentR.body)}`);
  check(sentR.body.instructions.startsWith("Be brief.\n\n") && sentR.body.instructions.includes("ramen"),
        `responses: memory after the caller's instructions: ${sentR.body.instructions}`);
  check(resp.response.headers.get("x-engram-memory") === "added", "responses: X-Engram-Memory: added");
  const r1 = await turnsOf("alice");
  check(r1.length === r0 + 1 && JSON.stringify(r1[r1.length - 1]).includes("Answer to: What food do I like?"),
        `responses: the exchange was admitted: ${r0} -> ${r1.length}`);

  // Streamed through the SDK's stream helper, input items with parts, a
  // chained response: the input and previous_response_id are passed as they are.
  const input = [{ role: "user", content: [{ type: "input_text", text: "Where do I live?" }] }];
  const helper = client.responses.stream({ model: "fake-model", input, previous_response_id: "resp_earlier" },
                                         { headers: { "X-Engram-User": "alice" } });
  let deltas = "";
  helper.on("response.output_text.delta", (e) => (deltas += e.delta));
  const final = await helper.finalResponse();
  check(final.output_text === "Answer to: Where do I live?" && deltas === final.output_text,
        `responses stream: "${deltas}" / ${JSON.stringify(final.output_text)}`);
  sentR = received[received.length - 1];
  check(isDeepStrictEqual(sentR.body.input, input) && sentR.body.previous_response_id === "resp_earlier" && sentR.body.stream === true,
        `responses stream: input untouched: ${JSON.stringify(sentR.body)}`);
  check(sentR.body.instructions.includes("Lyon"), `responses stream: memory in instructions: ${sentR.body.instructions}`);
  const r2 = await turnsOf("alice");
  check(r2.length === r1.length + 1, "responses stream: the exchange was admitted");

  // A raw stream of events, a function call, and cut-off answers: nothing admitted.
  const events = await client.responses.create({ model: "fake-model", input: "Tell me more CUTOFF", user: "alice", stream: true });
  const types = [];
  for await (const e of events) types.push(e.type);
  check(types[0] === "response.created" && types[types.length - 1] === "response.incomplete", `responses events: ${types}`);
  const cutoff = await client.responses.create({ model: "fake-model", input: "Say it all CUTOFF", user: "alice" });
  check(cutoff.status === "incomplete", "responses: an incomplete answer comes back as it is");
  const fn = [{ type: "function", name: "weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
  const calledR = await client.responses.create({ model: "fake-model", input: "Weather where I live?", tools: fn, user: "alice" });
  check(calledR.output[0]?.type === "function_call" && calledR.output[0].name === "weather", `responses tool call: ${JSON.stringify(calledR.output)}`);
  check(isDeepStrictEqual(received[received.length - 1].body.tools, fn), "responses: tools passed through unchanged");
  check((await turnsOf("alice")).length === r2.length, "responses: cut-off answers and tool calls are not admitted");

  // Errors: OpenAI's shapes, a stream's error event, a malformed input.
  await rejects(client.responses.create({ model: "fake-model", input: "FAIL500 now", user: "alice" }),
                "responses: upstream 500", (e) => e.status === 500 && /fake model broke/.test(e.message));
  await rejects(client.responses.create({ model: "fake-model", input: "FAIL500 streamed", user: "alice", stream: true })
                  .then(async (s) => { for await (const _ of s); }),
                "responses: upstream 500 while streaming", (e) => /HTTP 500/.test(e.message ?? ""));
  await rejects(client.responses.create({ model: "fake-model", input: 42, user: "alice" }),
                "responses: input of the wrong type", (e) => e.status === 400 && e.error?.param === "input");
  await rejects(client.responses.create({ model: "fake-model", input: "hi", instructions: ["no"], user: "alice" }),
                "responses: instructions of the wrong type", (e) => e.status === 400 && e.error?.param === "instructions");
  await rejects(limitedClient().responses.create({ model: "fake-model", input: "hi", user: "bob" }),
                "responses: a user outside the key", (e) => e.status === 403);
  const plainR = await client.responses.create({ model: "fake-model", input: "Hello there" }).withResponse();
  check(/^off/.test(plainR.response.headers.get("x-engram-memory") || "") && received[received.length - 1].body.instructions === undefined,
        "responses: no memory without a user");
  check((await turnsOf("alice")).length === r2.length, "responses: failed answers are not admitted");

  // Metrics and the generation receipts.
  const metrics = await (await fetch(`${srv.url}/metrics`, { headers: { Authorization: `Bearer ${srv.keys[2]}` } })).text();
  const calls = Number(/engram_proxy_calls_total (\d+)/.exec(metrics)?.[1]);
  const failures = Number(/engram_proxy_upstream_failures_total (\d+)/.exec(metrics)?.[1]);
  const tokens = Number(/engram_proxy_memory_tokens_total (\d+)/.exec(metrics)?.[1]);
  check(calls >= 16 && failures >= 5 && tokens > 0, `proxy metrics: calls ${calls} failures ${failures} tokens ${tokens}`);
} catch (e) {
  check(false, `unexpected: ${e?.name}: ${e?.message} ${e?.cause ?? ""}\n${e?.stack}\nserver output:\n${srv.output()}`);
} finally {
  await srv.stop();
  upstream.close();
}
process.exit(t.finish());
