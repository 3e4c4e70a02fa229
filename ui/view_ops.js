// Jobs and requests: pending and failed maintenance jobs with retry (admin);
// the tenant's recent requests (method, route, status, duration, time,
// request id: never bodies, queries or keys).
import { h, clear, append, loading, empty, errorBox, badge, fmtTime, fmtNum, table, button } from "./dom.js";
import { get, post, session } from "./api.js";

export async function render(main, ctx) {
  const who = session.who;
  const user = who.users && who.users.length ? who.users[0] : "";
  const jobs = h("section", { "aria-labelledby": "jobs-h" }, h("h2", { id: "jobs-h" }, "Maintenance jobs"));
  const reqs = h("section", { "aria-labelledby": "req-h" }, h("h2", { id: "req-h" }, "Recent requests"));
  append(main, [h("h1", {}, "Jobs and requests"), jobs, reqs]);
  const jb = h("div", {});
  jobs.appendChild(jb);
  async function loadJobs() {
    clear(jb).appendChild(loading("jobs"));
    try {
      const r = await get("/v1/jobs", { user, limit: 200 });
      if (!ctx.isCurrent()) return;
      clear(jb);
      append(jb, [h("p", { "data-testid": "job-counts" }, `${r.pending} pending, ${r.failed} failed.`)]);
      if (session.can("admin") && r.failed) {
        jb.appendChild(button("Retry failed jobs", async () => {
          try { const x = await post("/v1/jobs/retry", user ? { user } : {}); jb.prepend(h("p", { role: "status" }, `${x.retried} jobs made pending again.`)); loadJobs(); } catch (err) { jb.appendChild(errorBox(err)); }
        }, { "data-testid": "retry-jobs" }));
      }
      if (!r.jobs.length) { jb.appendChild(empty("No pending or failed jobs: maintenance is caught up.")); return; }
      jb.appendChild(table(["id", "user", "assistant", "kind", "status", "attempts", "last error", "updated"], r.jobs.map((j) => [
        String(j.id), j.user, j.assistant, j.kind, badge(j.status, j.status === "failed" ? "warn" : ""), String(j.attempts), j.last_error || "—", fmtTime(j.updated_at)]), "Jobs, oldest first"));
    } catch (err) {
      clear(jb).appendChild(errorBox(err));
    }
  }
  loadJobs();
  if (!session.can("admin")) {
    reqs.appendChild(h("p", { class: "note" }, "The access log of the tenant needs an admin key."));
    return;
  }
  const rb = h("div", {}, loading("requests"));
  append(reqs, [button("Refresh", () => loadReqs(), { class: "secondary" }), rb]);
  async function loadReqs() {
    clear(rb).appendChild(loading("requests"));
    try {
      const r = await get("/v1/requests", { limit: 100 });
      if (!ctx.isCurrent()) return;
      clear(rb);
      if (!r.requests.length) { rb.appendChild(empty("No requests recorded yet.")); return; }
      rb.appendChild(table(["time", "method", "route", "status", "ms", "request id"], r.requests.map((x) => [
        fmtTime(x.at), x.method, h("span", { class: "mono" }, x.route), badge(String(x.status), x.status >= 400 ? "warn" : "ok"), fmtNum(x.ms, 1), h("span", { class: "mono" }, x.request_id)]),
        `The newest ${r.requests.length} (the server keeps the last ${r.kept} per tenant, in memory)`));
    } catch (err) {
      clear(rb).appendChild(errorBox(err));
    }
  }
  loadReqs();
}
