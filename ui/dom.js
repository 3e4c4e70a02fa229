// DOM helpers. Every text from the server (memory is untrusted input) goes
// through textContent or attribute setters: nothing is ever parsed as HTML.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2), v);
    } else if (k === "class") {
      el.className = v;
    } else if (k === "href") {
      el.setAttribute("href", safeHref(v));
    } else if (k === "value") {
      el.value = v;
    } else if (k === "checked" || k === "disabled" || k === "selected") {
      el[k] = !!v;
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
}

// Only the inspector's own hash routes are links; anything else (a
// "javascript:" text, an outside address) never becomes an href.
export function safeHref(v) {
  const t = String(v);
  return t.startsWith("#/") ? t : "#/";
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function link(route, ...children) {
  return h("a", { href: route }, ...children);
}

// A form field with its label.
export function field(label, input, hint) {
  const id = input.id || "f-" + Math.random().toString(36).slice(2, 9);
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", {}, hint) : null);
}

export function button(text, onclick, attrs = {}) {
  return h("button", { type: "button", ...attrs, onclick }, text);
}

// The three states every view shows before its content.
export function loading(what) {
  return h("p", { class: "state loading", role: "status", "aria-live": "polite" }, `Loading ${what}…`);
}
export function empty(text) {
  return h("p", { class: "state empty" }, text);
}
export function errorBox(err) {
  const msg = err && err.message ? err.message : String(err);
  const rid = err && err.requestId ? ` (request ${err.requestId})` : "";
  return h("p", { class: "state error", role: "alert" }, `Error: ${msg}${rid}`);
}

export function fmtTime(iso) {
  if (!iso) return "—";
  return String(iso).replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}

export function fmtNum(n, digits = 2) {
  if (typeof n !== "number") return String(n ?? "—");
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

// A long text shown in full only on request (50 KB memories stay readable).
export function longText(text, max = 600) {
  const t = String(text ?? "");
  if (t.length <= max) return h("span", { class: "text", dir: "auto" }, t);
  const span = h("span", { class: "text", dir: "auto" }, t.slice(0, max) + "…");
  const more = button(`show all (${t.length} characters)`, () => {
    span.textContent = t;
    more.remove();
  }, { class: "link" });
  return h("span", {}, span, " ", more);
}

export function table(headers, rows, caption) {
  return h("div", { class: "table-wrap" },
    h("table", {},
      caption ? h("caption", {}, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))));
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}` }, text);
}

// A modal confirmation; resolves true only when the user confirms.
export function confirmDialog(message, confirmText = "Confirm") {
  return new Promise((resolve) => {
    const dlg = h("dialog", { class: "confirm", "aria-label": "Confirm" });
    const done = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    append(dlg, [
      h("p", {}, message),
      h("div", { class: "actions" },
        button("Cancel", () => done(false), { class: "secondary", "data-testid": "confirm-cancel" }),
        button(confirmText, () => done(true), { class: "danger", "data-testid": "confirm-ok" })),
    ]);
    dlg.addEventListener("cancel", () => done(false));
    document.body.appendChild(dlg);
    dlg.showModal();
  });
}
