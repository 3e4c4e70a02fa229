// Profile and facts: profile slots with the pages they rest on (click through
// to the turns); the fact memories with filters (the API's operators),
// cursor pagination, search with score explanation, version history side by
// side, and add / edit / delete / purge / bulk delete as the key's role allows.
import { h, clear, append, loading, empty, errorBox, badge, fmtTime, fmtNum, longText, button, field, table, confirmDialog } from "./dom.js";
import { get, post, patch, del, session } from "./api.js";
import { route } from "./nav.js";
import { userBar, needUser } from "./pick.js";

const OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains", "exists"];
const PAGE = 20;

export async function render(main, ctx) {
  if (!ctx.user) return needUser(main, ctx, "facts");
  const user = ctx.user;
  append(main, [h("h1", {}, `Profile and facts of ${user}`), userBar(ctx, "facts")]);
  const prof = h("section", { "aria-labelledby": "prof-h" });
  const mem = h("section", { "aria-labelledby": "mem-h" });
  append(main, [prof, mem]);
  await Promise.all([profile(prof, ctx, user), memories(mem, ctx, user)]);
}

// The memory's own scope (the API refuses empty ids).
function scopeOf(m) {
  const s = {};
  if (m.user_id) s.user = m.user_id;
  if (m.agent_id) s.agent = m.agent_id;
  if (m.run_id) s.run = m.run_id;
  return s;
}

async function profile(section, ctx, user) {
  append(section, [h("h2", { id: "prof-h" }, "Profile")]);
  const body = h("div", {}, loading("profile"));
  section.appendChild(body);
  try {
    const [p, segs] = await Promise.all([get("/v1/profile", { user }), get("/v1/segments", { user, archived: true })]);
    if (!ctx.isCurrent()) return;
    clear(body);
    const turnOf = new Map(segs.pages.map((x) => [x.id, x.turn_id]));
    const pageLinks = (ids) => ids.length ? ids.map((id) => [h("a", { href: route("memory", { user, turn: turnOf.get(id) }), "data-testid": "evidence-link", title: "open the turn of this page" }, `page ${id}`), " "]) : "—";
    if (!p.profile.length) body.appendChild(empty("No profile slots yet: they are derived when a segment gets hot enough to be consolidated."));
    else body.appendChild(table(["dimension", "value", "rests on", "updated"], p.profile.map((s) => [s.dimension, longText(s.value), h("span", {}, pageLinks(s.evidence_pages)), fmtTime(s.updated_at)]), "Profile slots"));
    const facts = [...p.user_facts, ...p.assistant_facts];
    append(body, [h("h3", {}, "Consolidated facts and their sources")]);
    if (!facts.length) body.appendChild(empty("No consolidated facts yet."));
    else body.appendChild(table(["fact", "kind", "version", "source pages", "recorded", "lineage"], facts.map((f) => [
      longText(f.text), f.kind, String(f.version), h("span", {}, pageLinks(f.source_pages)), fmtTime(f.record_time),
      h("a", { href: route("lineage", { user, kind: "fact", id: f.id }) }, "receipts")]), "Facts derived from the dialogue"));
  } catch (err) {
    clear(body).appendChild(errorBox(err));
  }
}

function filterBuilder(onChange) {
  const fieldIn = h("input", { type: "text", placeholder: "e.g. category or kind", "data-testid": "filter-field" });
  const opIn = h("select", {}, OPS.map((o) => h("option", { value: o }, o)));
  const valIn = h("input", { type: "text", placeholder: "value (JSON or text)", "data-testid": "filter-value" });
  const text = h("textarea", { rows: 2, spellcheck: "false", placeholder: '{"category": "food"}', "data-testid": "filter-json" });
  const parseVal = (v) => { try { return JSON.parse(v); } catch { return v; } };
  const add = button("Add condition", () => {
    const f = fieldIn.value.trim();
    if (!f) return;
    let cur = {};
    try { cur = text.value.trim() ? JSON.parse(text.value) : {}; } catch { cur = {}; }
    const op = opIn.value;
    const cond = op === "exists" ? "*" : op === "eq" ? parseVal(valIn.value) : { [op]: op === "in" || op === "nin" ? String(valIn.value).split(",").map((x) => parseVal(x.trim())) : parseVal(valIn.value) };
    if (cur[f] && typeof cur[f] === "object" && typeof cond === "object" && !Array.isArray(cond)) Object.assign(cur[f], cond);
    else cur[f] = cond;
    text.value = JSON.stringify(cur);
    onChange();
  }, { class: "secondary" });
  const box = h("fieldset", { class: "filters" }, h("legend", {}, "Filters (operators: " + OPS.join(", ") + "; AND / OR / NOT in the JSON)"),
    h("div", { class: "inline" }, field("Field", fieldIn), field("Operator", opIn), field("Value", valIn), add),
    field("Filter JSON", text));
  return { box, value: () => text.value.trim() };
}

async function memories(section, ctx, user) {
  const canWrite = session.can("write"), canAdmin = session.can("admin");
  append(section, [h("h2", { id: "mem-h" }, "Fact memories")]);
  if (canWrite) {
    const t = h("input", { type: "text", required: true, "data-testid": "add-text" });
    const form = h("form", { class: "inline", "aria-label": "Add a memory" }, field("New memory", t), h("button", { type: "submit", "data-testid": "add-memory" }, "Add"));
    const st = h("span", { role: "status" });
    form.appendChild(st);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        await post("/v1/memories", { user, text: t.value, infer: false });
        t.value = "";
        st.textContent = "Added.";
        load("");
      } catch (err) { clear(st).appendChild(errorBox(err)); }
    });
    section.appendChild(form);
  } else {
    section.appendChild(h("p", { class: "note", "data-testid": "read-only" }, "This key may only read: editing controls are hidden (and the server would refuse edits)."));
  }
  const filters = filterBuilder(() => {});
  const q = h("input", { type: "search", "data-testid": "fact-search" });
  const searchForm = h("form", { class: "inline", role: "search", "aria-label": "Search memories" }, field("Search", q),
    h("button", { type: "submit", "data-testid": "fact-search-go" }, "Search"), button("List", () => { q.value = ""; load(""); }, { class: "secondary" }));
  const bulk = h("div", { class: "bulk" });
  const body = h("div", {});
  const hist = h("section", { "aria-label": "History", class: "history", "data-testid": "history" });
  append(section, [filters.box, searchForm, bulk, body, hist]);
  const cursors = [""];
  const selected = new Set();

  function renderBulk() {
    clear(bulk);
    if (!canWrite) return;
    bulk.appendChild(button(`Delete selected (${selected.size})`, async () => {
      if (!selected.size) return;
      if (!(await confirmDialog(`Delete ${selected.size} memories? History keeps their text.`, "Delete"))) return;
      const errors = [];
      for (const [id, m] of [...current].filter(([id]) => selected.has(id))) {
        try { await del(`/v1/memories/${encodeURIComponent(id)}`, scopeOf(m)); } catch (e) { errors.push(e); }
      }
      selected.clear();
      await load(cursors[cursors.length - 1]);
      if (errors.length) body.prepend(errorBox(errors[0]));
    }, { class: "danger", disabled: !selected.size, "data-testid": "bulk-delete" }));
  }
  let current = new Map();

  function rows(items, withScore) {
    current = new Map(items.map((m) => [m.id, m]));
    const list = h("ul", { class: "facts" });
    for (const m of items) {
      const text = h("div", { class: "fact-text" }, longText(m.memory));
      const actions = h("div", { class: "actions" },
        button("History", () => history(hist, m), { class: "secondary", "data-testid": "history-btn" }));
      if (canWrite) {
        actions.appendChild(button("Edit", () => edit(text, m), { class: "secondary", "data-testid": "edit-btn" }));
        actions.appendChild(button("Delete", async () => {
          if (!(await confirmDialog("Delete this memory? History keeps its text.", "Delete"))) return;
          try { await del(`/v1/memories/${encodeURIComponent(m.id)}`, scopeOf(m)); load(cursors[cursors.length - 1]); } catch (err) { actions.appendChild(errorBox(err)); }
        }, { class: "danger", "data-testid": "delete-btn" }));
      }
      if (canAdmin) {
        actions.appendChild(button("Purge", async () => {
          if (!(await confirmDialog("Purge this memory? Every version's text is erased everywhere; this cannot be undone.", "Purge"))) return;
          try { await post(`/v1/memories/${encodeURIComponent(m.id)}/purge`, scopeOf(m)); load(cursors[cursors.length - 1]); } catch (err) { actions.appendChild(errorBox(err)); }
        }, { class: "danger", "data-testid": "purge-btn" }));
      }
      const check = canWrite ? h("input", { type: "checkbox", "aria-label": `select memory ${m.id}`, "data-testid": "select", onchange: (e) => { e.target.checked ? selected.add(m.id) : selected.delete(m.id); renderBulk(); } }) : null;
      const meta = h("div", { class: "meta" }, badge(m.kind), " ", `v${m.version}`, " · ", fmtTime(m.updated_at), m.agent_id ? ` · agent ${m.agent_id}` : "", m.degraded ? [" ", badge("degraded", "warn")] : null);
      const li = h("li", { class: "fact card", "data-testid": "fact", "data-id": m.id }, check, h("div", { class: "grow" }, text, meta, withScore ? explain(m) : null), actions);
      list.appendChild(li);
    }
    return list;
  }

  function explain(m) {
    const d = m.score_details || {};
    return h("div", { class: "explain", "data-testid": "score" },
      `score ${fmtNum(m.score ?? 0, 3)} = 0.55 × vector ${fmtNum(d.vector ?? 0, 3)} + 0.30 × lexical ${fmtNum(d.lexical ?? 0, 3)} (bm25 ${fmtNum(d.bm25 ?? 0, 3)}) + 0.15 × entity ${fmtNum(d.entity ?? 0, 3)}`,
      d.entities && d.entities.length ? ` · entities: ${d.entities.join(", ")}` : "",
      ` · found by ${[d.from_vector && "vector", d.from_lexical && "words", d.from_entity && "entity"].filter(Boolean).join(" + ") || "—"}`);
  }

  function edit(textBox, m) {
    const input = h("textarea", { rows: 3, "data-testid": "edit-text" });
    input.value = m.memory;
    const st = h("span", { role: "status" });
    const form = h("form", { class: "edit", "aria-label": "Edit memory" }, field("New text", input),
      h("button", { type: "submit", "data-testid": "save-edit" }, "Save new version"), button("Cancel", () => load(cursors[cursors.length - 1]), { class: "secondary" }), st);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        await patch(`/v1/memories/${encodeURIComponent(m.id)}`, { ...scopeOf(m), text: input.value });
        await load(cursors[cursors.length - 1]);
        const fresh = current.get(m.id);
        if (fresh) history(hist, fresh);
      } catch (err) { clear(st).appendChild(errorBox(err)); }
    });
    clear(textBox).appendChild(form);
    input.focus();
  }

  async function load(cursor) {
    selected.clear();
    renderBulk();
    clear(body).appendChild(loading("memories"));
    try {
      const params = { user, narrower: true, limit: PAGE, cursor, filters: filters.value() || undefined };
      const r = await get("/v1/memories", params);
      if (!ctx.isCurrent()) return;
      clear(body);
      if (!r.results.length) { body.appendChild(empty("No memories match.")); return; }
      append(body, [rows(r.results, false), h("div", { class: "pager" },
        cursors.length > 1 ? button("Previous", () => { cursors.pop(); load(cursors[cursors.length - 1]); }) : null,
        r.next_cursor ? button("Next", () => { cursors.push(r.next_cursor); load(r.next_cursor); }, { "data-testid": "next-facts" }) : null)]);
    } catch (err) {
      clear(body).appendChild(errorBox(err));
    }
  }

  async function search() {
    clear(body).appendChild(loading("results"));
    try {
      const f = filters.value();
      const r = await post("/v1/memories/search", { user, narrower: true, query: q.value, explain: true, top_k: 20, ...(f ? { filters: JSON.parse(f) } : {}) });
      if (!ctx.isCurrent()) return;
      clear(body);
      if (!r.results.length) { body.appendChild(empty(`Nothing found for “${q.value}”.`)); return; }
      body.appendChild(rows(r.results, true));
    } catch (err) {
      clear(body).appendChild(errorBox(err));
    }
  }
  searchForm.addEventListener("submit", (e) => { e.preventDefault(); q.value.trim() ? search() : load(""); });
  await load("");
}

async function history(section, m) {
  clear(section).appendChild(loading("history"));
  try {
    const path = `/v1/memories/${encodeURIComponent(m.id)}`;
    const [r, rec] = await Promise.all([get(`${path}/history`, scopeOf(m)), get(`${path}/receipts`, scopeOf(m))]);
    clear(section);
    append(section, [h("h3", {}, `History of ${m.id}`),
      table(["version", "event", "before", "after", "actor", "at"], r.results.map((e) => [
        String(e.version), badge(e.event), e.old_memory === null ? "—" : longText(e.old_memory, 300),
        e.new_memory === null ? "—" : longText(e.new_memory, 300), e.actor || "—", fmtTime(e.at)]), "Versions side by side (oldest first)"),
      h("h3", {}, "Receipts"),
      rec.receipts.length
        ? h("div", { "data-testid": "memory-receipts" }, table(["version", "transition", "status", "run", "at"], rec.receipts.map((x) => [
          String(x.version), `${x.from_tier || "—"} → ${x.to_tier}`, badge(x.status, x.status === "committed" ? "ok" : "warn"), x.run_id, fmtTime(x.at)]),
          "Content-free receipts of every version (oldest first)"))
        : empty("No receipts (they may have been compacted into day counts).")]);
    section.scrollIntoView({ block: "nearest" });
  } catch (err) {
    clear(section).appendChild(errorBox(err));
  }
}
