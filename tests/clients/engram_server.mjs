// Starts the real `engram serve` for the client tests: a fresh home, API
// keys made with the CLI before the start, the port read from the server's
// "listening on" line. Usage: const srv = await startServer(binary, {keys: [...]}).
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// keys: [{tenant, role, users?}] -> srv.keys[i] is the key text.
// toml: the text of $ENGRAM_HOME/engram.toml (e.g. a model endpoint).
export async function startServer(binary, { keys = [], args = [], env = {}, toml = "" } = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "engram-client-test-"));
  if (toml) fs.writeFileSync(path.join(home, "engram.toml"), toml);
  const baseEnv = { ...process.env, ENGRAM_DB: "", ENGRAM_HOME: "", ...env };
  const made = keys.map((k) => {
    const argv = ["--home", home, "keys", "create", "--tenant", k.tenant, "--role", k.role];
    if (k.users) argv.push("--users", k.users.join(","));
    const out = execFileSync(binary, argv, { env: baseEnv, encoding: "utf8" });
    const key = out.trim().split("\n")[0].trim();
    if (!key) throw new Error(`keys create printed no key: ${out}`);
    return key;
  });
  const child = spawn(binary, ["--home", home, "serve", "--listen", "127.0.0.1:0", ...args], {
    env: baseEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const deadline = Date.now() + 60000;
  while (!output.includes("engram serve: ready")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`engram serve did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)[1]);
  return {
    home,
    port,
    url: `http://127.0.0.1:${port}`,
    keys: made,
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

// A tiny check list: check(cond, what) records failures; finish() reports.
export function checker(name) {
  const failures = [];
  let checks = 0;
  return {
    check(cond, what) {
      checks++;
      if (!cond) failures.push(what);
    },
    async rejects(promise, what, test) {
      checks++;
      try {
        await promise;
        failures.push(`${what}: did not fail`);
      } catch (e) {
        if (test && !test(e)) failures.push(`${what}: wrong error ${e?.name}: ${e?.message}`);
      }
    },
    finish() {
      if (failures.length) {
        console.error(`${name}: ${failures.length} of ${checks} checks failed:\n  - ${failures.join("\n  - ")}`);
        return 1;
      }
      console.log(`${name}: ${checks} checks passed`);
      return 0;
    },
  };
}
