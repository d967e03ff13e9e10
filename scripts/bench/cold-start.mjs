#!/usr/bin/env node
// node scripts/bench/cold-start.mjs dist/paygate | node dist/paygate.cjs
//
// Cold start: `serve --port 0` on a fresh data dir to the first 200 on /health/ready,
// 9 times with the shared TMPDIR (the executable's addon already extracted) and 9 with
// a fresh one; prints the median, min and max wall time and the median CPU time (user +
// sys of all the server's threads), which a busy machine inflates far less than wall time.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const [cmd, ...pre] = process.argv.slice(2);
async function once(freshTmp) {
  const dir = mkdtempSync(join(tmpdir(), "cold-"));
  const env = { ...process.env, PAYGATE_LOG_LEVEL: "warn", ...(freshTmp && { TMPDIR: dir }) };
  const t0 = performance.now();
  const child = spawn(cmd, [...pre, "serve", "--port", "0", "--data", join(dir, "data")], { stdio: ["ignore", "pipe", "ignore"], env });
  const url = await new Promise((r) => { let o = ""; child.stdout.on("data", (d) => { o += d; const m = /listening on (\S+)/.exec(o); if (m) r(m[1]); }); });
  for (;;) { if (await fetch(`${url}/health/ready`).then((r) => r.status === 200, () => false)) break; }
  const ms = performance.now() - t0;
  const f = (await import("node:fs")).readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
  cpu.push(((Number(f[11]) + Number(f[12])) * 1000) / 100);
  child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r)); rmSync(dir, { recursive: true, force: true });
  return ms;
}
let cpu = [];
for (const fresh of [false, true]) {
  cpu = [];
  const t = []; for (let i = 0; i < 9; i++) t.push(await once(fresh)); t.sort((a, b) => a - b);
  console.log(`${cmd} ${pre.join(" ")} ${fresh ? "fresh TMPDIR (addon extracted)" : "warm"}: median ${Math.round(t[4])} ms, min ${Math.round(t[0])}, max ${Math.round(t[8])}; CPU (user+sys) median ${cpu.sort((a, b) => a - b)[4]} ms`);
}
