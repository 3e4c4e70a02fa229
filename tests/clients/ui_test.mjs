// The inspector (ui/, served at /ui/) in a real browser: headless Chromium
// (Debian's, installed by scripts/bootstrap) driven by playwright-core
// against a live `engram serve` holding the sample dialogue. Fails, never
// skips, when Chromium is missing. Screenshots of every view go to
// $ENGRAM_UI_ARTIFACTS (default: build/test-artifacts/ui).
// Usage: node ui_test.mjs path/to/engram
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, checker } from "./engram_server.mjs";

const binary = process.argv[2];
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const chromiumPath = process.env.ENGRAM_CHROMIUM || "/usr/bin/chromium";
const artifacts = process.env.ENGRAM_UI_ARTIFACTS || path.join(repo, "build", "test-artifacts", "ui");

if (!binary) {
  console.error("usage: node ui_test.mjs path/to/engram");
  process.exit(2);
}
if (!fs.existsSync(chromiumPath)) {
  console.error(`ui_test: Chromium is missing at ${chromiumPath}: run scripts/bootstrap (installs Debian's chromium) ` +
    "or set ENGRAM_CHROMIUM. The browser tests fail without it; they are never skipped.");
  process.exit(1);
}
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  console.error(`ui_test: playwright-core is not installed (npm ci --prefix tests/clients): ${e.message}`);
  process.exit(1);
}
fs.rmSync(artifacts, { recursive: true, force: true });  // no screenshot of an earlier run is left
fs.mkdirSync(artifacts, { recursive: true });

const t = checker("ui_browser");
const HOSTILE = [
  `<img src=x onerror="window.__pwned='img'">`,
  `</script><script>window.__pwned='script'</script>`,
  `[click me](javascript:window.__pwned='link') <a href="javascript:window.__pwned='a'">x</a>`,
  `مرحبا بالعالم שלום עולם — right to left 👋🏽🎉 emoji`,
];
const BIG = "Long memory. ".repeat(Math.ceil(51200 / 13)).slice(0, 51200);

const srv = await startServer(binary, { keys: [{ tenant: "default", role: "admin" }, { tenant: "default", role: "read" }] });
const [adminKey, readKey] = srv.keys;
let browser, lastPage;
const problems = [];
try {
  const api = async (method, route, body, key = adminKey, type = "application/json") => {
    const res = await fetch(srv.url + route, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": type },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  // The sample dialogue, maintained (pages, segments, profile), plus hostile memories and a hostile turn.
  const dialogue = fs.readFileSync(path.join(repo, "samples", "dialogue.jsonl"), "utf8");
  await api("POST", "/v1/import?user=priya", dialogue, adminKey, "application/x-ndjson");
  await api("POST", "/v1/maintain", { user: "priya" });
  for (const text of [...HOSTILE, BIG, "Priya prefers window seats on long flights"]) {
    await api("POST", "/v1/memories", { user: "priya", text, infer: false });
  }
  await api("POST", "/v1/turns", { user: "priya", user_text: HOSTILE[0] + " " + HOSTILE[1], assistant_text: HOSTILE[3] });

  // The server side of the inspector: headers, redirect, embedded files.
  const root = await fetch(srv.url + "/", { redirect: "manual" });
  t.check(root.status === 302 && root.headers.get("location") === "/ui/", `/ redirects to /ui/ (${root.status})`);
  const index = await fetch(srv.url + "/ui/");
  const csp = index.headers.get("content-security-policy") || "";
  t.check(index.status === 200 && (index.headers.get("content-type") || "").startsWith("text/html"), "/ui/ is the page");
  t.check(csp.includes("script-src 'self'") && csp.includes("frame-ancestors 'none'") && !csp.includes("unsafe-inline"), `strict CSP: ${csp}`);
  t.check(index.headers.get("x-content-type-options") === "nosniff", "nosniff on /ui/");
  const etag = index.headers.get("etag");
  const again = await fetch(srv.url + "/ui/", { headers: { "If-None-Match": etag } });
  t.check(again.status === 304, `ETag revalidation answers 304 (${again.status})`);
  const js = await fetch(srv.url + "/ui/app.js");
  t.check((js.headers.get("content-type") || "").startsWith("text/javascript"), "scripts are text/javascript");
  const missing = await fetch(srv.url + "/ui/nope.js");
  t.check(missing.status === 404, "an unknown file is 404");

  browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  lastPage = page;
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error on ${page.url()}: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url().replace(srv.url, "")}`); });
  page.on("dialog", (d) => { problems.push(`a dialog opened: ${d.message()}`); d.dismiss(); });
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  const shot = async (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  const go = async (hash) => {
    await page.goto(`${srv.url}/ui/${hash}`);
  };
  const noPwn = async (where) => {
    const pwned = await page.evaluate(() => window.__pwned);
    t.check(pwned === undefined, `${where}: hostile text ran script (${pwned})`);
    const bad = await page.evaluate(() => ({
      imgs: document.querySelectorAll("img").length,
      scripts: [...document.querySelectorAll("script")].filter((s) => !s.src).length,
      jsLinks: [...document.querySelectorAll("a[href]")].filter((a) => !a.getAttribute("href").startsWith("#/")).length,
    }));
    t.check(bad.imgs === 0 && bad.scripts === 0 && bad.jsLinks === 0, `${where}: no element made from memory text ${JSON.stringify(bad)}`);
  };
  const labelled = async (where) => {
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll("button, input, select, textarea, a[href]")]
      .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !(el.textContent || "").trim())
      .map((el) => el.outerHTML.slice(0, 80)));
    t.check(unlabelled.length === 0, `${where}: controls without a label: ${unlabelled.join(" | ")}`);
  };

  // Sign in.
  await go("");
  await page.getByTestId("api-key").waitFor();
  await shot("0-sign-in");
  await page.getByTestId("api-key").fill(adminKey);
  await page.getByTestId("api-key").press("Enter");  // keyboard: the form submits on Enter
  await page.getByTestId("health").waitFor();
  t.check(!page.url().includes(adminKey), "the key is never in the URL");
  t.check(await page.evaluate(() => document.cookie === ""), "no cookie is set");
  t.check(await page.evaluate((k) => sessionStorage.getItem("engram.apiKey") === k, adminKey), "the key is kept in sessionStorage");

  // Overview: the user with its tiers.
  const userLink = page.getByTestId("user-link").filter({ hasText: "priya" });
  await userLink.waitFor();
  const row = await page.locator("tr", { has: userLink }).innerText();
  t.check(/priya/.test(row) && /\d/.test(row), `the users table shows priya's tier counts: ${row}`);
  await page.locator("figure.chart-fig").first().waitFor();
  await labelled("overview");
  await shot("1-overview");

  // A user's memory: the timeline, a segment and its turns.
  await userLink.click();
  await page.getByTestId("turn").first().waitFor();
  await page.getByTestId("segment").first().waitFor();
  await shot("2-memory");
  await page.getByTestId("segment-pages").first().click();
  const pageLink = page.getByTestId("page-turn-link").first();
  await pageLink.waitFor();
  await pageLink.click();
  await page.locator(".turn.focus").waitFor();
  t.check(/turn=\d+/.test(page.url()), `a page opens its turn (${page.url()})`);
  await labelled("memory");

  // Later turns (paged by cursor) end in STM and hold the hostile turn: rendered as text.
  for (let i = 0; i < 5; i++) {
    const next = page.getByTestId("next-turns");
    if (!(await next.count())) break;
    const first = await page.getByTestId("turn").first().getAttribute("id");
    await next.click();
    await page.waitForFunction((prev) => {
      const f = document.querySelector("[data-testid=turn]");
      return f && f.id !== prev;
    }, first);
  }
  t.check((await page.locator(".badge.stm").count()) > 0, "STM turns are marked");
  t.check((await page.getByText(`onerror="window.__pwned='img'"`, { exact: false }).count()) > 0, "the hostile turn shows as text");
  await shot("2-memory-stm");
  await noPwn("memory view");

  // Profile and facts: search, edit (new version in history), delete.
  await go("#/facts?user=priya");
  await page.getByTestId("fact").first().waitFor();
  await shot("3-facts");
  t.check((await page.getByText("<img src=x", { exact: false }).count()) > 0, "hostile memories show as text");
  t.check((await page.getByText("right to left", { exact: false }).count()) > 0, "right-to-left and emoji text shows");
  t.check((await page.getByRole("button", { name: /show all \(51200 characters\)/ }).count()) > 0, "a 50 KB memory is shortened with a way to show it all");
  await noPwn("facts view");
  await labelled("facts");
  await page.getByTestId("fact-search").fill("window seats flights");
  await page.getByTestId("fact-search-go").click();
  await page.getByTestId("score").first().waitFor();
  const scoreText = await page.getByTestId("score").first().innerText();
  t.check(/score .* vector .* lexical/.test(scoreText), `search explains its score: ${scoreText}`);
  const target = page.getByTestId("fact").filter({ hasText: "window seats" }).first();
  await target.getByTestId("edit-btn").click();
  await page.getByTestId("edit-text").fill("Priya prefers aisle seats on long flights");
  await page.getByTestId("save-edit").click();
  await page.getByTestId("history").getByText("aisle seats", { exact: false }).first().waitFor();
  const hist = await page.getByTestId("history").innerText();
  t.check(hist.includes("window seats") && hist.includes("aisle seats") && /UPDATE/.test(hist), `history shows both versions: ${hist.slice(0, 300)}`);
  // The memory's receipts: one per version (added, then updated), content-free.
  await page.getByTestId("memory-receipts").waitFor();
  const rec = await page.getByTestId("memory-receipts").innerText();
  const rows = rec.split("\n").filter((l) => /committed|degraded/.test(l));
  t.check(rows.length >= 2 && /→ lpm/.test(rec), `receipts of both versions: ${rec.slice(0, 300)}`);
  t.check(!rec.includes("window seats") && !rec.includes("aisle seats"), "receipts carry no memory text");
  await shot("3-facts-history");
  const victim = page.getByTestId("fact").filter({ hasText: "aisle seats" }).first();
  await victim.getByTestId("delete-btn").click();
  await page.getByTestId("confirm-ok").click();
  await page.getByTestId("fact").filter({ hasText: "aisle seats" }).waitFor({ state: "detached" });
  const left = await api("GET", "/v1/memories?user=priya&narrower=true&limit=1000");
  t.check(!left.results.some((m) => m.memory.includes("aisle seats")), "the deleted memory is gone");
  // Bulk delete of a selection (two hostile memories).
  for (const text of ["</script>", "javascript:"]) {
    await page.getByTestId("fact").filter({ hasText: text }).first().getByTestId("select").check();
  }
  await page.getByTestId("bulk-delete").click();
  await page.getByTestId("confirm-ok").click();
  await page.getByTestId("fact").filter({ hasText: "</script>" }).waitFor({ state: "detached" });
  const afterBulk = await api("GET", "/v1/memories?user=priya&narrower=true&limit=1000");
  t.check(!afterBulk.results.some((m) => m.memory.includes("</script>") || m.memory.includes("javascript:")), "bulk delete removed the selection");

  // Retrieval playground.
  await go("#/retrieve?user=priya");
  await page.getByTestId("query").fill("Where did Priya move for her new job?");
  await page.getByTestId("budget").fill("600");
  await page.getByTestId("retrieve").click();
  await page.getByTestId("context").waitFor();
  const ctxText = await page.getByTestId("context").innerText();
  t.check(/Lisbon/i.test(ctxText), `the context holds what was said: ${ctxText.slice(0, 200)}`);
  t.check((await page.getByTestId("why").count()) > 0, "each item says why it was chosen");
  t.check(/of 600 tokens used/.test(await page.getByTestId("budget-used").innerText()), "the budget use is shown");
  t.check((await page.getByText("matched terms", { exact: false }).count()) > 0, "matched terms are shown");
  await labelled("retrieve");
  await shot("4-retrieve");

  // Lineage and health; jobs and requests.
  await go("#/lineage?user=priya&kind=turn&id=1");
  await page.getByTestId("overall").waitFor();
  await page.getByTestId("receipts").waitFor();
  t.check(/input → stm/.test(await page.getByTestId("receipts").innerText()), "a turn's receipts start with its admission");
  t.check((await page.getByTestId("run-canary").count()) === 1, "an admin sees the canary button");
  await labelled("lineage");
  await shot("5-lineage");
  await go("#/ops");
  await page.getByTestId("job-counts").waitFor();
  await page.getByText("/v1/retrieve", { exact: true }).first().waitFor();
  const log = await page.locator("section[aria-labelledby=req-h]").innerText();
  t.check(!log.includes(adminKey) && !log.includes("priya"), "the request log holds no key and no user");
  await labelled("ops");
  await shot("6-ops");

  // A phone's width: nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await go("#/memory?user=priya");
  await page.getByTestId("segment").first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  t.check(overflow <= 1, `the memory view fits a phone's width (overflow ${overflow}px)`);
  await shot("7-memory-phone");
  await page.setViewportSize({ width: 1280, height: 900 });

  // Sign out clears the key; a read key sees no edit controls and a forced edit is refused.
  await page.getByTestId("sign-out").click();
  await page.getByTestId("api-key").waitFor();
  t.check(await page.evaluate(() => sessionStorage.getItem("engram.apiKey") === null), "sign out clears the key");
  await page.getByTestId("api-key").fill(readKey);
  await page.getByTestId("sign-in").click();
  await page.getByTestId("health").waitFor();
  await go("#/facts?user=priya");
  await page.getByTestId("fact").first().waitFor();
  t.check((await page.getByTestId("read-only").count()) === 1, "a read key is told it may only read");
  for (const id of ["edit-btn", "delete-btn", "purge-btn", "add-memory", "bulk-delete", "select"]) {
    t.check((await page.getByTestId(id).count()) === 0, `a read key sees no ${id}`);
  }
  const forced = await page.evaluate(async () => {
    const key = sessionStorage.getItem("engram.apiKey");
    const list = await (await fetch("/v1/memories?user=priya&narrower=true", { headers: { Authorization: `Bearer ${key}` } })).json();
    const m = list.results[0];
    const res = await fetch(`/v1/memories/${m.id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ user: m.user_id, agent: m.agent_id || "", text: "forced" }),
    });
    return { status: res.status, body: await res.json() };
  });
  t.check(forced.status === 403 && forced.body.error.code === "forbidden", `a forced edit with a read key is refused: ${JSON.stringify(forced)}`);
  await go("#/ops");
  await page.getByTestId("job-counts").waitFor();
  t.check((await page.getByTestId("retry-jobs").count()) === 0, "a read key sees no retry");
  await go("#/lineage");
  await page.getByTestId("overall").waitFor();
  t.check((await page.getByTestId("run-canary").count()) === 0, "a read key sees no canary button");
  await shot("8-read-key-facts");

  // Air-gapped: every request went to this server.
  const outside = requests.filter((u) => !u.startsWith(srv.url) && !u.startsWith("data:"));
  t.check(outside.length === 0, `requests outside the server: ${outside.join(", ")}`);
  // The forced edit's 403 is expected (and logged by the browser).
  const errs = problems.filter((p) => !/status of 403/.test(p) && !/^HTTP 403 for PATCH/.test(p));
  t.check(errs.length === 0, `no console errors on any view:\n    ${errs.join("\n    ")}`);
  console.log(`ui_browser: screenshots in ${artifacts}`);
} catch (e) {
  t.check(false, `unexpected failure: ${e.stack || e}`);
  if (lastPage) await lastPage.screenshot({ path: path.join(artifacts, "failure.png"), fullPage: true }).catch(() => {});
  if (problems.length) console.error(`browser problems so far:\n  ${problems.join("\n  ")}`);
} finally {
  if (browser) await browser.close();
  await srv.stop();
}
process.exit(t.finish());
