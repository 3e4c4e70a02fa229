// Retrieval playground: a query and a token budget in, the assembled context
// out, with each item's tier, score, tokens and why it was chosen. Retrieval
// is read-only: nothing is admitted, nothing changes.
import { h, clear, append, loading, empty, errorBox, badge, fmtNum, longText, field, table } from "./dom.js";
import { post } from "./api.js";
import { route } from "./nav.js";
import { userBar, needUser } from "./pick.js";
import { meter } from "./charts.js";

export async function render(main, ctx) {
  if (!ctx.user) return needUser(main, ctx, "retrieve");
  const user = ctx.user;
  const q = h("input", { type: "text", required: true, value: ctx.query.get("q") || "", class: "wide", "data-testid": "query" });
  const budget = h("input", { type: "number", min: 1, max: 100000, value: ctx.query.get("budget") || 600, "data-testid": "budget" });
  const stm = h("input", { type: "checkbox", checked: true });
  const prof = h("input", { type: "checkbox", checked: true });
  const form = h("form", { class: "card", "aria-label": "Retrieve" },
    h("div", { class: "inline" }, field("Query", q), field("Token budget", budget)),
    h("div", { class: "inline" }, h("label", {}, stm, " include recent turns"), h("label", {}, prof, " include the profile")),
    h("button", { type: "submit", "data-testid": "retrieve" }, "Retrieve"));
  const out = h("section", { "aria-live": "polite", "aria-label": "Result" });
  append(main, [h("h1", {}, `Retrieval playground for ${user}`), userBar(ctx, "retrieve"),
    h("p", { class: "lead" }, "Read-only: a retrieval admits nothing and changes no memory."), form, out]);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    history.replaceState(null, "", route("retrieve", { user, q: q.value, budget: budget.value }));
    clear(out).appendChild(loading("context"));
    try {
      const r = await post("/v1/retrieve", { user, query: q.value, budget: Number(budget.value), include_stm: stm.checked, include_profile: prof.checked, explain: true });
      clear(out);
      show(out, r, user);
    } catch (err) {
      clear(out).appendChild(errorBox(err));
    }
  });
  if (q.value) form.requestSubmit();
}

function show(out, r, user) {
  const parts = {};
  for (const i of r.items) parts[i.kind] = (parts[i.kind] || 0) + i.tokens;
  const used = r.context_tokens;
  append(out, [
    h("h2", {}, "Budget"),
    h("p", { "data-testid": "budget-used" }, `${used} of ${r.budget} tokens used (${Math.round((100 * used) / r.budget)}%)${r.truncated ? "; some items did not fit" : ""}.`),
    meter([...Object.entries(parts).map(([k, v]) => ({ label: k, value: v })), { label: "unused", value: Math.max(0, r.budget - used) }], r.budget, "budget use by part"),
    table(["part", "tokens"], Object.entries(parts).map(([k, v]) => [k, String(v)]), "Tokens per part (item texts; headings and dates make up the rest)"),
    h("h2", {}, "Items"),
  ]);
  if (!r.items.length) out.appendChild(empty("Nothing in memory matched and nothing recent fits: the context is empty."));
  else out.appendChild(table(["#", "kind", "tier", "score", "tokens", "why", "text"], r.items.map((i, n) => [
    String(n + 1), i.kind, badge(i.tier), fmtNum(i.score, 3), String(i.tokens), why(i, user), longText(i.text, 300)]), "Context items in context order"));
  append(out, [h("h2", {}, "Assembled context"), h("pre", { class: "context", "data-testid": "context", dir: "auto" }, r.context || "(empty)")]);
}

function why(i, user) {
  const w = i.why || {};
  const li = [];
  li.push(h("li", {}, w.chosen || "—"));
  if (w.matched_terms) li.push(h("li", {}, w.matched_terms.length ? ["matched terms: ", w.matched_terms.map((t) => badge(t, "kw"))] : "no query term in its own text"));
  if (w.expansions && w.expansions.length) li.push(h("li", {}, ["related words (WordNet): ", w.expansions.map((e) => badge(`${e.term} ×${fmtNum(e.weight, 2)}`, "kw"))]));
  if (w.lexical_score !== undefined) li.push(h("li", {}, `own words ${fmtNum(w.lexical_score, 2)} (covers ${Math.round(100 * (w.coverage || 0))}% of the question), neighbours ${fmtNum(w.neighbour_score, 2)}`));
  if (w.neighbour_evidence) li.push(h("li", {}, "neighbour evidence: ranked through the neighbouring messages of its conversation"));
  if (w.speaker) li.push(h("li", {}, `speaker: ${w.speaker}${w.speaker_factor ? " (the speaker the question names: score raised)" : ""}`));
  if (w.time_cue) li.push(h("li", {}, "time cue: the question asks when and the item is dated"));
  if (w.named_date) li.push(h("li", {}, "named date: said on the day or in the month the question names"));
  if (w.answer_type) li.push(h("li", {}, "answer type: it names a thing of the kind the question asks for (WordNet)"));
  if (w.said_date) li.push(h("li", {}, "said date: its own \u201cyesterday\u201d or \u201clast Friday\u201d points to the day or month the question names"));
  if (w.cue_factor !== undefined && w.cue_factor !== 1) li.push(h("li", {}, `own cues ×${fmtNum(w.cue_factor, 2)} (asks a question, opens a session, names things)`));
  if (w.speaker_factor && w.self_reference) li.push(h("li", {}, `speaks of ${w.self_reference > 0 ? "its writer" : "the person addressed"} (${fmtNum(w.self_reference, 2)})`));
  if (w.vector_similarity) li.push(h("li", {}, `vector similarity: ${w.vector_similarity}`));
  const link = i.turn_id ? h("a", { href: route("memory", { user, turn: i.turn_id }) }, `turn ${i.turn_id}`) : null;
  return h("div", { class: "why", "data-testid": "why" }, h("ul", { class: "plain" }, li), link);
}
