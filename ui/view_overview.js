// Overview: the key and store, health, jobs, degraded share, tier sizes and
// activity over time, and the tenant's users with their tier counts.
import { h, clear, append, loading, empty, errorBox, table, badge, fmtNum, button } from "./dom.js";
import { get, session } from "./api.js";
import { route } from "./nav.js";
import { barChart, lineChart } from "./charts.js";

const PAGE = 20;

export async function render(main, ctx) {
  const who = session.who;
  append(main, [h("h1", {}, "Overview"),
    h("p", { class: "lead" }, `Tenant ${who.tenant}, key role ${who.role}. Embedder ${who.embedder}, maintenance ${who.maintainer}.`)]);
  const cards = h("section", { class: "cards", "aria-label": "Summary" }, loading("summary"));
  const charts = h("section", { "aria-label": "Charts" });
  const users = h("section", { "aria-labelledby": "users-h" });
  append(main, [cards, charts, users]);
  const limitedUser = who.users && who.users.length ? who.users[0] : "";
  summary(cards, charts, limitedUser, ctx);
  userList(users, ctx);
}

async function summary(cards, charts, user, ctx) {
  try {
    const [stats, health] = await Promise.all([
      get("/v1/stats", { user }),
      get("/v1/health", { user, max_findings: 0 }),
    ]);
    if (!ctx.isCurrent()) return;
    const items = stats.mtm_pages + stats.archived_pages + stats.user_facts + stats.assistant_facts + stats.profile_slots;
    const share = items ? stats.degraded_items / items : 0;
    clear(cards);
    const card = (label, value, extra, testid) => h("div", { class: "card stat", "data-testid": testid }, h("span", { class: "label" }, label), h("span", { class: "value" }, value), extra || null);
    append(cards, [
      card("Health", badge(health.overall, health.green ? "ok" : "warn"), h("a", { href: route("lineage", { user }) }, "details"), "health"),
      card("Scopes", String(stats.scopes), h("small", {}, "user and assistant pairs"), "scopes"),
      card("Turns admitted", String(stats.turns_admitted)),
      card("Pending jobs", String(stats.pending_jobs), h("a", { href: route("ops") }, "jobs")),
      card("Failed jobs", String(stats.failed_jobs), null, "failed-jobs"),
      card("Degraded share", `${(share * 100).toFixed(0)}%`, h("small", {}, "made by the built-in engine")),
    ]);
    const tiers = [{ day: "now", stm: stats.stm_turns, mtm: stats.mtm_pages, archive: stats.archived_pages,
      lpm: stats.user_facts + stats.assistant_facts + stats.profile_slots }];
    clear(charts);
    append(charts, [h("h2", {}, "Tiers"),
      barChart(tiers, ["stm", "mtm", "archive", "lpm"], { stm: "STM turns", mtm: "MTM pages", archive: "archived pages", lpm: "LPM items" }, "Tier sizes now")]);
    const box = h("div", {}, loading("activity"));
    charts.appendChild(box);
    try {
      const act = await get("/v1/activity", { user, days: 30 });
      clear(box);
      if (!act.days.length) {
        box.appendChild(empty("No activity in the last 30 days."));
      } else {
        append(box, [
          barChart(act.days, ["admitted", "promoted", "consolidated"], { admitted: "turns admitted", promoted: "turns promoted", consolidated: "facts consolidated" }, "Admissions and promotions per day"),
          lineChart(act.days, ["stm", "mtm_segments", "archived_segments", "lpm_facts"], { stm: "STM turns", mtm_segments: "MTM segments", archived_segments: "archived segments", lpm_facts: "LPM fact versions" }, "Tier sizes over time (end of day, from receipts)"),
        ]);
      }
    } catch (err) {
      clear(box).appendChild(errorBox(err));
    }
  } catch (err) {
    clear(cards).appendChild(errorBox(err));
  }
}

function userList(section, ctx) {
  const q = h("input", { type: "search", value: ctx.query.get("q") || "", "aria-label": "Search users", placeholder: "search users", "data-testid": "user-search" });
  const body = h("div", {});
  const cursors = [""];
  const form = h("form", { class: "inline", role: "search" }, q, h("button", { type: "submit" }, "Search"));
  append(section, [h("h2", { id: "users-h" }, "Users"), form, body]);
  async function load(cursor) {
    clear(body).appendChild(loading("users"));
    try {
      const r = await get("/v1/users", { q: q.value.trim(), cursor, limit: PAGE });
      if (!ctx.isCurrent()) return;
      clear(body);
      if (!r.users.length) {
        body.appendChild(empty(q.value ? `No user matches “${q.value}”.` : "No users yet."));
        return;
      }
      const rows = r.users.map((u) => [
        h("a", { href: route("memory", { user: u.user }), "data-testid": "user-link" }, u.user),
        u.assistants.join(", "),
        String(u.stm_turns), String(u.mtm_pages), String(u.mtm_segments), String(u.archived_pages),
        String(u.user_facts + u.assistant_facts), String(u.profile_slots),
        String(u.pending_jobs), String(u.failed_jobs),
      ]);
      append(body, [table(["user", "assistants", "STM turns", "MTM pages", "segments", "archived pages", "facts", "profile", "pending", "failed"], rows, `${r.matched} users`),
        h("div", { class: "pager" },
          cursors.length > 1 ? button("Previous", () => { cursors.pop(); load(cursors[cursors.length - 1]); }) : null,
          r.next_cursor ? button("Next", () => { cursors.push(r.next_cursor); load(r.next_cursor); }) : null)]);
    } catch (err) {
      clear(body).appendChild(errorBox(err));
    }
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); cursors.length = 1; load(""); });
  load("");
}
