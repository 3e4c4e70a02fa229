// Routes of the inspector: "#/<view>?<params>", and the user being looked at.
export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const i = raw.indexOf("?");
  const path = i < 0 ? raw : raw.slice(0, i);
  return { path: path || "overview", query: new URLSearchParams(i < 0 ? "" : raw.slice(i + 1)) };
}

export function route(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const t = q.toString();
  return `#/${path}${t ? "?" + t : ""}`;
}

let currentUser = sessionStorage.getItem("engram.user") || "";
export function selectedUser() { return currentUser; }
export function selectUser(u) {
  currentUser = u || "";
  if (currentUser) sessionStorage.setItem("engram.user", currentUser);
  else sessionStorage.removeItem("engram.user");
}
