// A user's memory: the turn timeline (STM marked, paged by cursor), the
// mid-term segments as cards (heat, keywords, summary, pages and their chain
// links) and the archived segments. Any page jumps to its turn.
import { h, clear, append, loading, empty, errorBox, badge, fmtTime, fmtNum, longText, button } from "./dom.js";
import { get } from "./api.js";
import { route } from "./nav.js";
import { meter } from "./charts.js";
import { userBar, needUser } from "./pick.js";

const PAGE = 20;

export async function render(main, ctx) {
  if (!ctx.user) return needUser(main, ctx, "memory");
  const user = ctx.user;
  const assistant = ctx.query.get("assistant") || "";
  append(main, [h("h1", {}, `Memory of ${user}`), userBar(ctx, "memory"),
    h("p", { class: "lead" }, "Short-term turns are kept verbatim; older turns become pages grouped into topic segments; cold segments move to the archive (still searchable).")]);
  const timeline = h("section", { "aria-labelledby": "tl-h", class: "timeline" });
  const segs = h("section", { "aria-labelledby": "seg-h" });
  append(main, [h("div", { class: "two-col" }, timeline, segs)]);
  await Promise.all([turns(timeline, ctx, user, assistant), segments(segs, ctx, user, assistant)]);
}

async function findTurn(user, assistant, turnId) {
  for (let after = 0; ;) {
    const r = await get("/v1/turns", { user, assistant, after, limit: 1000 });
    const t = r.turns.find((x) => x.id === turnId);
    if (t) return t;
    if (r.next_after === null) return null;
    after = r.next_after;
  }
}

async function turns(section, ctx, user, assistant) {
  append(section, [h("h2", { id: "tl-h" }, "Turn timeline")]);
  const body = h("div", {}, loading("turns"));
  section.appendChild(body);
  const focus = Number(ctx.query.get("turn") || 0);
  let after = Number(ctx.query.get("after") || 0);
  try {
    if (focus) {
      const t = await findTurn(user, assistant, focus);
      if (t) after = Math.max(0, t.seq - 3);
    }
    const r = await get("/v1/turns", { user, assistant, after, limit: PAGE });
    if (!ctx.isCurrent()) return;
    clear(body);
    if (!r.turns.length) {
      body.appendChild(empty(after ? "No turns after this point." : "No turns yet for this user."));
    }
    const list = h("ol", { class: "turns", "aria-label": "Turns" });
    for (const t of r.turns) {
      const li = h("li", { class: `turn ${t.tier}${t.id === focus ? " focus" : ""}`, id: `turn-${t.id}`, "data-testid": "turn", tabindex: t.id === focus ? "-1" : null },
        h("div", { class: "meta" },
          h("span", {}, `#${t.seq}`), " ",
          badge(t.tier.toUpperCase(), t.tier === "stm" ? "stm" : t.tier === "archive" ? "archive" : "mtm"), " ",
          h("time", {}, fmtTime(t.event_time)),
          t.page_id ? [" · page ", String(t.page_id)] : null, " · ",
          h("a", { href: route("lineage", { user, kind: "turn", id: t.id }) }, "receipts")),
        h("p", { class: "say user" }, h("b", {}, (t.user_name || "user") + ": "), longText(t.user_text)),
        h("p", { class: "say assistant" }, h("b", {}, (t.assistant_name || "assistant") + ": "), longText(t.assistant_text)));
      list.appendChild(li);
    }
    body.appendChild(list);
    const pager = h("div", { class: "pager" });
    if (after > 0) pager.appendChild(h("a", { href: route("memory", { user, assistant, after: Math.max(0, after - PAGE) }), class: "button" }, "Earlier turns"));
    if (r.next_after !== null) pager.appendChild(h("a", { href: route("memory", { user, assistant, after: r.next_after }), class: "button", "data-testid": "next-turns" }, "Later turns"));
    body.appendChild(pager);
    if (focus) {
      const el = document.getElementById(`turn-${focus}`);
      if (el) { el.scrollIntoView({ block: "center" }); el.focus(); }
    }
  } catch (err) {
    clear(body).appendChild(errorBox(err));
  }
}

function segmentCard(g, pagesById, user, assistant) {
  const heatLabel = `heat ${fmtNum(g.heat)}: ${g.visits} visits + ${g.interaction} length + ${fmtNum(g.recency)} recency`;
  const pages = g.page_ids.map((id) => pagesById.get(id)).filter(Boolean);
  const details = h("details", { class: "pages" }, h("summary", { "data-testid": "segment-pages" }, `${g.pages} pages`),
    h("ol", { class: "plain" }, pages.map((p) => h("li", {},
      h("span", { class: "mono" }, `page ${p.id}`), " ",
      h("span", { class: "chain", title: "chain links" }, `← ${p.prev_page ?? "none"} · → ${p.next_page ?? "none"}`), " ",
      p.degraded ? badge("degraded", "warn") : null, " ",
      h("a", { href: route("memory", { user, assistant, turn: p.turn_id }), "data-testid": "page-turn-link" }, `turn ${p.turn_id}`)))));
  return h("article", { class: `card segment${g.archived ? " archived" : ""}`, "data-testid": "segment", "aria-label": `segment ${g.id}` },
    h("header", {}, h("h3", {}, `Segment ${g.id}`), g.archived ? badge("archived", "archive") : badge(`heat ${fmtNum(g.heat)}`, "heat")),
    meter([{ label: "visits", value: g.visits }, { label: "length", value: g.interaction }, { label: "recency", value: g.recency }], g.heat, heatLabel),
    h("p", { class: "small" }, heatLabel, ` · last access ${g.last_access ? fmtTime(g.last_access) : "never"}`),
    h("p", { class: "summary" }, longText(g.summary, 400)),
    h("p", { class: "keywords" }, g.keywords.map((k) => badge(k, "kw"))),
    details,
    h("a", { href: route("lineage", { user, kind: "segment", id: g.id }) }, "receipts"));
}

async function segments(section, ctx, user, assistant) {
  append(section, [h("h2", { id: "seg-h" }, "Mid-term segments")]);
  const body = h("div", {}, loading("segments"));
  section.appendChild(body);
  try {
    const r = await get("/v1/segments", { user, assistant, archived: true });
    if (!ctx.isCurrent()) return;
    clear(body);
    const pagesById = new Map(r.pages.map((p) => [p.id, p]));
    const live = r.segments.filter((g) => !g.archived).sort((a, b) => b.heat - a.heat);
    const archived = r.segments.filter((g) => g.archived);
    if (!live.length) body.appendChild(empty("No mid-term segments yet: turns stay in short-term memory until it is over capacity."));
    append(body, [h("div", { class: "grid" }, live.map((g) => segmentCard(g, pagesById, user, assistant)))]);
    append(body, [h("h2", {}, "Archived segments")]);
    if (!archived.length) body.appendChild(empty("Nothing archived."));
    append(body, [h("div", { class: "grid" }, archived.map((g) => segmentCard(g, pagesById, user, assistant)))]);
  } catch (err) {
    clear(body).appendChild(errorBox(err));
  }
}
