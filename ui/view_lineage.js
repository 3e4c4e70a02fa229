// Lineage and health: the eight-state summary and the findings; any item's
// receipts as a timeline (input -> stm -> mtm -> lpm, archive, deletes); the
// canary (admin).
import { h, clear, append, loading, empty, errorBox, badge, fmtTime, field, table, button } from "./dom.js";
import { get, post, session } from "./api.js";
import { route } from "./nav.js";

const STATES = ["scope_conflict", "source_at_risk", "promotion_missing", "stale_retrieval", "generation_unverified", "uncertain", "waiting", "healthy"];
const KINDS = ["turn", "segment", "fact", "profile_slot", "job", "generation", "retrieval", "scope"];

export async function render(main, ctx) {
  const who = session.who;
  const user = ctx.user || (who.users && who.users.length ? who.users[0] : "");
  append(main, [h("h1", {}, "Lineage and health"),
    h("p", { class: "lead" }, "Every tier transition leaves a content-free receipt; the classifier reads them with the store's rows and gives every item one of eight states.")]);
  const sum = h("section", { "aria-labelledby": "health-h" }, h("h2", { id: "health-h" }, `Health ${user ? "of " + user : "of the tenant"}`));
  const rec = h("section", { "aria-labelledby": "rec-h" });
  const can = h("section", { "aria-labelledby": "can-h" });
  append(main, [sum, rec, can]);
  receipts(rec, ctx, user);
  canary(can);
  const body = h("div", {}, loading("health"));
  sum.appendChild(body);
  try {
    const r = await get("/v1/health", { user, max_findings: 50 });
    if (!ctx.isCurrent()) return;
    clear(body);
    append(body, [
      h("p", { "data-testid": "overall" }, "Overall: ", badge(r.overall, r.green ? "ok" : "warn"), ` · ${r.items} items · ${r.receipts_read} receipts read · degraded share ${(r.degraded_share * 100).toFixed(0)}%`),
      table(STATES, [STATES.map((s) => String(r.counts[s] ?? 0))], "Items per state (worst first)"),
      h("h3", {}, `Findings (${r.findings_total})`),
    ]);
    if (!r.findings.length) body.appendChild(empty("No findings: every item is healthy or waiting."));
    else body.appendChild(table(["state", "item", "user", "reason", "since", "receipts"], r.findings.map((f) => [
      badge(f.state, "warn"), `${f.kind} ${f.id}`, f.user, f.reason, fmtTime(f.since),
      h("a", { href: route("lineage", { user: f.user, kind: f.kind, id: f.id }) }, "receipts")]), "Non-green items"));
  } catch (err) {
    clear(body).appendChild(errorBox(err));
  }
}

function receipts(section, ctx, defaultUser) {
  const user = h("input", { type: "text", value: ctx.query.get("user") || defaultUser || "", required: true });
  const kind = h("select", {}, KINDS.map((k) => h("option", { value: k, selected: k === (ctx.query.get("kind") || "turn") }, k)));
  const id = h("input", { type: "number", min: 0, value: ctx.query.get("id") || "", "data-testid": "receipt-id" });
  const form = h("form", { class: "inline", "aria-label": "Receipts of an item" }, field("User", user), field("Kind", kind), field("Id (empty: all of the kind)", id),
    h("button", { type: "submit" }, "Show receipts"));
  const body = h("div", {});
  append(section, [h("h2", { id: "rec-h" }, "Receipts of an item"), form, body]);
  async function load() {
    if (!user.value) { clear(body).appendChild(empty("Name a user to see receipts.")); return; }
    clear(body).appendChild(loading("receipts"));
    try {
      const r = await get("/v1/receipts", { user: user.value, kind: kind.value, id: id.value, limit: 200 });
      clear(body);
      if (!r.receipts.length) { body.appendChild(empty("No receipts for this item (or they were compacted into day counts).")); return; }
      body.appendChild(h("ol", { class: "receipts", "data-testid": "receipts" }, r.receipts.map((x) => h("li", { class: `receipt ${x.status}` },
        h("time", {}, fmtTime(x.at)), " ",
        h("b", {}, `${x.kind} ${x.memory_id} v${x.version}`), " ",
        badge(`${x.from_tier} → ${x.to_tier}`, "tier"), " ", badge(x.status, x.status === "failed" ? "warn" : "ok"),
        h("div", { class: "small mono" }, `run ${x.run_id}${x.outcome ? " · " + x.outcome : ""}${x.depends_on_version ? " · used " + x.depends_on_version : ""}`)))));
    } catch (err) {
      clear(body).appendChild(errorBox(err));
    }
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); history.replaceState(null, "", route("lineage", { user: user.value, kind: kind.value, id: id.value })); load(); });
  load();
}

function canary(section) {
  append(section, [h("h2", { id: "can-h" }, "Canary")]);
  if (!session.can("admin")) {
    section.appendChild(h("p", { class: "note" }, "The canary (the lineage operating gate on throwaway scopes) needs an admin key."));
    return;
  }
  const out = h("div", { "aria-live": "polite" });
  append(section, [h("p", {}, "Runs the operating gate on throwaway scopes of tenant engram-canary in this store, then erases them."),
    button("Run the canary", async () => {
      clear(out).appendChild(loading("the canary (it takes a few seconds)"));
      try {
        const r = await post("/v1/canary", {});
        clear(out);
        append(out, [h("p", {}, "Result: ", badge(r.ok ? "passed" : "failed", r.ok ? "ok" : "warn")),
          table(["check", "result", "detail"], (r.checks || []).map((c) => [c.check, badge(c.ok ? "ok" : "FAIL", c.ok ? "ok" : "warn"), c.detail]), "Canary checks"),
          r.error ? h("p", { class: "state error" }, r.error) : null]);
      } catch (err) {
        clear(out).appendChild(errorBox(err));
      }
    }, { "data-testid": "run-canary" }), out]);
}
