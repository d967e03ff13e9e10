#!/usr/bin/env node
// node scripts/bench/rss.mjs ['{"ENV":"value"}']
//
// Peak RSS of the single executable under the heaviest part of `npm run bench -- --exe`:
// starts `dist/paygate sandbox` (rate limit off, extra environment from the argument),
// drives 8 s of tokenize and 8 s of sales, then 2,500 sales fanning out to 4 webhook
// endpoints on a local receiver, and prints VmHWM / VmRSS / RssAnon / RssFile (MB)
// after each step (the executable's cached pages dropped first: see dropCachedPages),
// then the largest anonymous mappings (V8 heap pages, malloc arenas).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { dropCachedPages } from "../exe-toolchain.mjs";
const extraEnv = JSON.parse(process.argv[2] ?? "{}");
const dir = mkdtempSync(join(tmpdir(), "rss-"));
const exe = process.env.PAYGATE_EXE ?? "dist/paygate";
dropCachedPages(exe);
const child = spawn(exe, ["sandbox", "--json", "--port", "0", "--data", dir], { env: { ...process.env, PAYGATE_RATE_LIMIT: "0", PAYGATE_LOG_LEVEL: "warn", ...extraEnv }, stdio: ["ignore", "pipe", "inherit"] });
const line = await new Promise((r) => { let o = ""; child.stdout.on("data", (d) => { o += d; if (o.includes("\n")) r(o.split("\n")[0]); }); });
const sb = JSON.parse(line);
const status = () => Object.fromEntries(readFileSync(`/proc/${child.pid}/status`, "utf8").split("\n").filter((l) => /^(VmHWM|VmRSS|RssAnon|RssFile|Threads)/.test(l)).map((l) => l.split(/:\s+/)).map(([k, v]) => [k, k === "Threads" ? Number(v) : Math.round(parseInt(v) / 1024)]));
console.log("idle", JSON.stringify(status()));
const card = JSON.stringify({ card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } });
let n = 0;
const tok = await (await fetch(sb.base_url + "/v1/tokens", { method: "POST", headers: { authorization: `Bearer ${sb.keys.publishable}`, "content-type": "application/json", "idempotency-key": "x" }, body: card })).json();
for (const [path, key, body] of [["/v1/tokens", sb.keys.publishable, card], ["/v1/payments/sale", sb.keys.secret, JSON.stringify({ amount: 1000, currency: "usd", gateway_token: tok.token })]]) {
  const r = await autocannon({ url: sb.base_url, connections: 32, duration: 8, requests: [{ method: "POST", path, setupRequest(req) { req.headers = { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `k${n++}` }; req.body = body; return req; } }] });
  console.log(path, Math.round(r.requests.average), "req/s", r.non2xx + r.errors, "errors", JSON.stringify(status()));
}
let received = 0;
const receiver = createServer((req, res) => { req.resume(); req.on("end", () => { received++; res.end("ok"); }); });
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
for (let i = 0; i < 4; i++) await (await fetch(sb.base_url + "/v1/webhook_endpoints", { method: "POST", headers: { authorization: `Bearer ${sb.keys.secret}`, "content-type": "application/json", "idempotency-key": `w${i}` }, body: JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/h/${i}`, event_types: ["*"] }) })).json();
await autocannon({ url: sb.base_url, connections: 32, amount: 2500, requests: [{ method: "POST", path: "/v1/payments/sale", setupRequest(req) { req.headers = { authorization: `Bearer ${sb.keys.secret}`, "content-type": "application/json", "idempotency-key": `k${n++}` }; req.body = JSON.stringify({ amount: 1000, currency: "usd", gateway_token: tok.token }); return req; } }] });
console.log("sales done", JSON.stringify(status()));
const deadline = Date.now() + 120000;
while (received < 20000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
console.log("webhooks", received, JSON.stringify(status()));
receiver.close();
{
  const metrics = await (await fetch(`${sb.base_url}/metrics`)).text();
  const heap = metrics.split("\n").filter((l) => /^nodejs_(heap_space_size_(total|used)_bytes|external_memory_bytes|heap_size_(total|used)_bytes)/.test(l));
  for (const l of heap) { const [k, v] = l.split(/ (?=[\d.e+]+$)/); if (Number(v) > 2 ** 20) console.log(`  ${k} ${Math.round(Number(v) / 2 ** 20)} MB`); }
  console.log(" ", readFileSync(`/proc/${child.pid}/smaps_rollup`, "utf8").split("\n").filter((l) => /^(Rss|Anonymous|Private_Clean|Shared_Clean|FilePmdMapped):/.test(l)).map((l) => l.replace(/\s+/g, " ")).join("; "));
}
{
  const smaps = readFileSync(`/proc/${child.pid}/smaps`, "utf8").split("\n");
  const rows = [];
  let cur;
  for (const l of smaps) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(l);
    if (m) { cur = { size: (parseInt(m[2], 16) - parseInt(m[1], 16)) / 1024, perm: m[3], name: m[4] || "[anon]", rss: 0 }; rows.push(cur); }
    else if (l.startsWith("Rss:")) cur.rss = parseInt(l.slice(4));
  }
  const anon = rows.filter((r) => r.name === "[anon]" || r.name === "[heap]").sort((a, b) => b.rss - a.rss).slice(0, 12);
  for (const r of anon) console.log(`  ${r.name} ${r.perm} size ${Math.round(r.size / 1024)} MB rss ${Math.round(r.rss / 1024)} MB`);
}
child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
rmSync(dir, { recursive: true, force: true });
