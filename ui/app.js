// The inspector's shell: sign-in, navigation and a hash router. Each view
// has its own URL (#/overview, #/memory?user=..., ...) and shows a loading,
// an empty and an error state of its own.
import { h, clear, append, field, button, errorBox } from "./dom.js";
import { get, session } from "./api.js";
import { parseHash, route, selectedUser, selectUser } from "./nav.js";
import * as overview from "./view_overview.js";
import * as memory from "./view_memory.js";
import * as facts from "./view_facts.js";
import * as retrieve from "./view_retrieve.js";
import * as lineage from "./view_lineage.js";
import * as ops from "./view_ops.js";

const VIEWS = [
  { path: "overview", title: "Overview", mod: overview },
  { path: "memory", title: "Memory", mod: memory, user: true },
  { path: "facts", title: "Profile & facts", mod: facts, user: true },
  { path: "retrieve", title: "Retrieval", mod: retrieve, user: true },
  { path: "lineage", title: "Lineage & health", mod: lineage },
  { path: "ops", title: "Jobs & requests", mod: ops },
];

function signInView(root, message) {
  const input = h("input", { type: "password", autocomplete: "off", spellcheck: "false", required: true,
    placeholder: "engram API key", "data-testid": "api-key" });
  const status = h("p", { role: "status", "aria-live": "polite" }, message || "");
  const form = h("form", { class: "signin card", "aria-label": "Sign in" },
    h("h1", {}, "engram inspector"),
    h("p", {}, "Paste an API key. It stays in this tab (sessionStorage) and is sent only to this server."),
    field("API key", input),
    h("button", { type: "submit", "data-testid": "sign-in" }, "Sign in"),
    status);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    session.signIn(input.value);
    input.value = "";
    status.textContent = "Checking the key…";
    try {
      session.who = await get("/v1/whoami");
      location.hash = route("overview");
      render();
    } catch (err) {
      session.signOut();
      clear(status).appendChild(errorBox(err));
    }
  });
  clear(root).appendChild(form);
  input.focus();
}

function shell(active) {
  const nav = h("nav", { "aria-label": "Views" }, h("ul", {}, VIEWS.map((v) => {
    const href = route(v.path, v.user && selectedUser() ? { user: selectedUser() } : {});
    return h("li", {}, h("a", { href, "aria-current": v.path === active ? "page" : null, "data-view": v.path }, v.title));
  })));
  const who = session.who;
  const header = h("header", { class: "top" },
    h("a", { class: "skip", href: "#/" + active, onclick: (e) => { e.preventDefault(); document.getElementById("view").focus(); } }, "Skip to content"),
    h("span", { class: "brand" }, "engram"),
    nav,
    h("span", { class: "who", "data-testid": "who" }, `${who.tenant} · ${who.role}`),
    button("Sign out", () => { session.signOut(); selectUser(""); location.hash = "#/signin"; render(); },
      { class: "secondary", "data-testid": "sign-out" }));
  return header;
}

let renderSeq = 0;
export async function render() {
  const seq = ++renderSeq;
  const app = document.getElementById("app");
  const { path, query } = parseHash();
  if (!session.key() || path === "signin") {
    if (session.key() && path === "signin") { location.hash = route("overview"); return; }
    signInView(app);
    return;
  }
  if (!session.who) {
    try {
      session.who = await get("/v1/whoami");
    } catch (err) {
      if (err.status === 401) session.signOut();
      signInView(app, err.message);
      return;
    }
  }
  if (seq !== renderSeq) return;
  const view = VIEWS.find((v) => v.path === path) || VIEWS[0];
  if (query.get("user")) selectUser(query.get("user"));
  const main = h("main", { id: "view", tabindex: "-1", "data-view": view.path });
  clear(app);
  append(app, [shell(view.path), main]);
  document.title = `${view.title} · engram`;
  try {
    await view.mod.render(main, { query, user: query.get("user") || selectedUser(), route, rerender: render, isCurrent: () => seq === renderSeq });
  } catch (err) {
    if (seq === renderSeq) append(main, [errorBox(err)]);
  }
}

window.addEventListener("hashchange", () => render());
render();
