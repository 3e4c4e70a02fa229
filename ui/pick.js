// The user chooser of the views about one user.
import { h, field, loading, errorBox, clear, append } from "./dom.js";
import { get } from "./api.js";
import { route, selectUser } from "./nav.js";

export function userBar(ctx, view, extra = {}) {
  const input = h("input", { type: "search", value: ctx.user || "", list: "user-list", autocomplete: "off",
    "data-testid": "user-input" });
  const list = h("datalist", { id: "user-list" });
  get("/v1/users", { limit: 200 }).then((r) => {
    for (const u of r.users) list.appendChild(h("option", { value: u.user }));
  }).catch(() => {});
  const form = h("form", { class: "userbar", role: "search", "aria-label": "Choose a user" },
    field("User", input), list, h("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    selectUser(input.value.trim());
    location.hash = route(view, { user: input.value.trim(), ...extra });
  });
  return form;
}

// For a view that needs a user: the chooser with the tenant's users as links.
export async function needUser(main, ctx, view) {
  append(main, [h("h1", {}, "Choose a user"), userBar(ctx, view)]);
  const box = h("div", {}, loading("users"));
  main.appendChild(box);
  try {
    const r = await get("/v1/users", { limit: 50 });
    clear(box);
    if (!r.users.length) {
      box.appendChild(h("p", { class: "state empty" }, "This tenant has no users yet: admit a turn (POST /v1/turns) first."));
      return;
    }
    box.appendChild(h("ul", { class: "plain" }, r.users.map((u) => h("li", {}, h("a", { href: route(view, { user: u.user }) }, u.user)))));
  } catch (err) {
    clear(box).appendChild(errorBox(err));
  }
}
