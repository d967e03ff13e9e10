#!/usr/bin/env node
// npm run bench [-- --exe] [-- --cpu-prof] [-- --small-heap (bundle only)] [-- --duration 10]
//                [-- --postgres [--instances N]]
//
// Boots paygate (the bundle, or with --exe the single executable) on loopback with a
// fresh data dir and the rate limit off, drives each scenario with autocannon for a
// fixed time, and prints requests/s, p50, p99, errors, the ratio to a bare h3 v2
// endpoint measured in the same run, and the server's peak RSS. Then: authorize p99
// at half its peak rate, cold start to /health/ready, webhook fan-out to a local
// receiver. Every write carries its own Idempotency-Key. With --postgres the same
// scenarios run on PostgreSQL (scripts/bench/postgres.mjs), on N instances sharing it
// (default 1); each scenario's connections are split evenly over the instances.
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { benchDatabase } from "./bench/postgres.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const useExe = args.includes("--exe");
const cpuProf = args.includes("--cpu-prof");
// V8 sizes its heap at start-up, so a memory bound is a NODE_OPTIONS setting.
const SMALL_HEAP = "--max-old-space-size=64 --max-semi-space-size=4";
const heapEnv = args.includes("--small-heap") ? { NODE_OPTIONS: SMALL_HEAP } : {};
const durationArg = args.indexOf("--duration");
const DURATION = durationArg >= 0 ? Number(args[durationArg + 1]) : Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const usePostgres = args.includes("--postgres");
const instancesArg = args.indexOf("--instances");
const INSTANCES = instancesArg >= 0 ? Number(args[instancesArg + 1]) : 1;
if (!(INSTANCES >= 1) || (INSTANCES > 1 && !usePostgres)) throw new Error("--instances N (1 or more) needs --postgres");
/** Where every paygate instance serves; a scenario aimed at the first is spread over all. */
let bases = [];
const bundle = join(root, "dist", "paygate.cjs");
const exe = join(root, "dist", "paygate");

function log(line) {
  process.stdout.write(`${line}\n`);
}

if (!existsSync(bundle)) execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
if (useExe && !existsSync(exe)) throw new Error("dist/paygate is missing: run npm run package first");
// The executable carries its own heap bound (--max-heap-size, scripts/package.mjs),
// which V8 refuses to combine with both of these flags.
if (useExe && heapEnv.NODE_OPTIONS) throw new Error("--small-heap is for the bundle: the executable has its heap bound built in");

const children = new Set();
function stopAll() {
  for (const child of children) child.kill("SIGKILL");
}
process.on("exit", stopAll);
process.on("SIGINT", () => process.exit(130));

/** Spawns a server and resolves with its child and the first line of stdout. */
function startProcess(command, commandArgs, env = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, commandArgs, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
    children.add(child);
    let out = "";
    const onData = (chunk) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline >= 0) {
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolvePromise({ child, line: out.slice(0, newline) });
      }
    };
    child.stdout.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${command} exited with ${code}`)));
  });
}

function peakRssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

/** CPU time (user + system, ms) the processes used so far; with clock ticks of 10 ms. */
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}
/** Every paygate instance's pid: the CPU a request costs is theirs together (not the database's). */
const instancePids = [];

let counter = 0;
const uniqueKey = () => `bench-${process.pid}-${++counter}`;

async function run(name, options) {
  // A fixed `amount` of requests replaces the fixed duration.
  const one = (extra) => autocannon({ connections: CONNECTIONS, ...(options.amount === undefined && { duration: DURATION }), ...options, ...extra });
  const targets = bases.length > 1 && options.url === bases[0] ? bases : [options.url];
  const results = await Promise.all(
    targets.map((url) =>
      one({
        url,
        connections: Math.max(1, Math.round((options.connections ?? CONNECTIONS) / targets.length)),
        ...(options.amount !== undefined && { amount: Math.ceil(options.amount / targets.length) }),
        ...(options.overallRate !== undefined && { overallRate: Math.max(1, Math.round(options.overallRate / targets.length)) }),
      }),
    ),
  );
  // Over several instances: throughput adds up; the latencies shown are the worst instance's.
  return {
    name,
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0),
    total: results.reduce((sum, r) => sum + r.requests.total, 0),
  };
}

async function api(base, key, path, body) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "idempotency-key": uniqueKey(), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return res.json();
}

function writeRequest(path, key, makeBody) {
  return {
    method: "POST",
    path,
    setupRequest(req) {
      req.headers = { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": uniqueKey() };
      req.body = JSON.stringify(makeBody());
      return req;
    },
  };
}

const rows = [];
const dataDir = mkdtempSync(join(tmpdir(), "paygate-bench-"));
const profDir = join(root, ".tmp", "prof");
let database;
try {
  database = usePostgres ? await benchDatabase() : undefined;
  const engineEnv = database ? { PAYGATE_DATABASE_URL: database.url, PAYGATE_MASTER_KEY: randomBytes(32).toString("base64") } : {};
  // The ceiling.
  const bare = await startProcess(process.execPath, [join(root, "scripts", "bench", "bare-h3.mjs")]);
  const bareUrl = bare.line.replace("listening on ", "");
  const ceiling = await run("bare h3 GET /ping", { url: `${bareUrl}/ping` });
  rows.push({ ...ceiling, rss: peakRssMb(bare.child.pid) });
  bare.child.kill("SIGTERM");

  // paygate.
  const nodeArgs = cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const command = useExe ? exe : process.execPath;
  const commandArgs = useExe ? ["sandbox", "--json", "--port", "0", "--data", dataDir] : [...nodeArgs, bundle, "sandbox", "--json", "--port", "0", "--data", dataDir];
  const paygate = await startProcess(command, commandArgs, { PAYGATE_RATE_LIMIT: "0", ...heapEnv, ...engineEnv });
  const sandbox = JSON.parse(paygate.line);
  const base = sandbox.base_url;
  bases = [base];
  instancePids.push(paygate.child.pid);
  for (let i = 1; i < INSTANCES; i++) {
    const serveArgs = useExe ? ["serve", "--port", "0", "--data", dataDir] : [bundle, "serve", "--port", "0", "--data", dataDir];
    const instance = await startProcess(command, serveArgs, { PAYGATE_RATE_LIMIT: "0", PAYGATE_LOG_LEVEL: "warn", ...heapEnv, ...engineEnv });
    bases.push(/listening on (\S+)/.exec(instance.line)[1]);
    instancePids.push(instance.child.pid);
  }
  const { secret, publishable } = sandbox.keys;
  const pid = paygate.child.pid;
  const token = (await api(base, publishable, "/v1/tokens", { card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } })).token;
  const card = { card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } };

  const scenario = async (name, options) => {
    const cpuBefore = cpuMs(instancePids);
    const row = await run(name, { url: base, ...options });
    rows.push({ ...row, rss: peakRssMb(pid), cpuPerRequest: (cpuMs(instancePids) - cpuBefore) / row.total });
  };

  await scenario("tokenize", { requests: [writeRequest("/v1/tokens", publishable, () => card)] });
  await scenario("authorize (manual)", { requests: [writeRequest("/v1/payments/authorize", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token, capture_method: "manual" }))] });
  await scenario("sale", { requests: [writeRequest("/v1/payments/sale", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token }))] });

  // Captures need authorizations: prepare as many as the authorize scenario managed in the same time.
  const authorizeRow = rows.find((r) => r.name === "authorize (manual)");
  const toPrepare = Math.min(200_000, Math.max(1000, Math.round(authorizeRow.rps * DURATION)));
  const prepared = [];
  const prepareRun = await autocannon({
    url: base,
    connections: CONNECTIONS,
    amount: toPrepare,
    requests: [writeRequest("/v1/payments/authorize", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token, capture_method: "manual" }))],
    setupClient(client) {
      client.on("body", (body) => {
        const id = JSON.parse(body.toString()).id;
        if (id) prepared.push(id);
      });
    },
  });
  void prepareRun;
  let next = 0;
  await scenario("capture (prepared authorizations)", {
    amount: prepared.length,
    requests: [writeRequest("/v1/payments/capture", secret, () => ({ payment_id: prepared[next++ % prepared.length] }))],
  });
  const paymentId = prepared[0];
  await scenario("GET payment", { requests: [{ method: "GET", path: `/v1/payments/${paymentId}`, headers: { authorization: `Bearer ${secret}` } }] });
  const replayBody = JSON.stringify({ amount: 1000, currency: "usd", gateway_token: token });
  await fetch(`${base}/v1/payments/sale`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "idempotency-key": "bench-replay", "content-type": "application/json" }, body: replayBody });
  await scenario("idempotent replay (sale)", {
    requests: [{ method: "POST", path: "/v1/payments/sale", headers: { authorization: `Bearer ${secret}`, "idempotency-key": "bench-replay", "content-type": "application/json" }, body: replayBody }],
  });

  // Latency at half of the peak authorize rate: paced evenly (8 connections, each at
  // an eighth of the rate), and as autocannon's overallRate over all connections,
  // which releases requests in bursts.
  const half = Math.max(8, Math.round(authorizeRow.rps / 2));
  const authorizeRequest = writeRequest("/v1/payments/authorize", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token, capture_method: "manual" }));
  const paced = await run(`authorize at ${half} req/s (half of peak), paced, 8 connections`, {
    url: base,
    connections: 8,
    connectionRate: Math.round(half / 8),
    requests: [authorizeRequest],
  });
  rows.push({ ...paced, rss: peakRssMb(pid) });
  const bursty = await run(`authorize at ${half} req/s (half of peak), bursts, ${CONNECTIONS} connections`, {
    url: base,
    overallRate: half,
    requests: [authorizeRequest],
  });
  rows.push({ ...bursty, rss: peakRssMb(pid) });

  // Webhook fan-out: 4 endpoints on a local receiver answering 200; sales make 2
  // events each. Only the drain of the backlog left once the sales are done is timed,
  // so the figure is delivery alone, not delivery competing with payments.
  let received = 0;
  let last = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received += 1;
      last = performance.now();
      res.end("ok");
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
  const endpoints = [];
  for (let i = 0; i < 4; i++) {
    const endpoint = await api(base, secret, "/v1/webhook_endpoints", { url: `http://127.0.0.1:${receiver.address().port}/hook/${i}`, event_types: ["*"] });
    if (!endpoint.id) throw new Error(`could not register a webhook endpoint: ${JSON.stringify(endpoint)}`);
    endpoints.push(endpoint.id);
  }
  const sales = 2500;
  await autocannon({ url: base, connections: CONNECTIONS, amount: sales, requests: [writeRequest("/v1/payments/sale", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token }))] });
  const expected = sales * 2 * endpoints.length;
  const backlogStart = performance.now();
  const receivedBefore = received;
  const deadline = Date.now() + 180_000;
  while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const drained = received - receivedBefore;
  const fanout = drained > 0 ? Math.round(drained / ((last - backlogStart) / 1000)) : 0;
  receiver.close();
  const heaviestRss = peakRssMb(pid);

  paygate.child.kill("SIGTERM");
  await new Promise((r) => paygate.child.once("exit", r));
  children.delete(paygate.child);

  // Cold start: process start to the first 200 on /health/ready, median of 7.
  async function coldStart(cmd, cmdArgs) {
    const times = [];
    for (let i = 0; i < 7; i++) {
      const dir = mkdtempSync(join(tmpdir(), "paygate-cold-"));
      const started = performance.now();
      const child = spawn(cmd, [...cmdArgs, "serve", "--port", "0", "--data", dir], { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, PAYGATE_LOG_LEVEL: "warn", ...heapEnv } });
      const url = await new Promise((r) => {
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
          const m = /listening on (\S+)/.exec(out);
          if (m) r(m[1]);
        });
      });
      for (;;) {
        const ok = await fetch(`${url}/health/ready`).then((res) => res.status === 200, () => false);
        if (ok) break;
      }
      times.push(performance.now() - started);
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    }
    times.sort((a, b) => a - b);
    return Math.round(times[3]);
  }
  const coldBundle = await coldStart(process.execPath, [bundle]);
  const coldExe = existsSync(exe) ? await coldStart(exe, []) : undefined;

  const ceilingRps = rows[0].rps;
  log("");
  log(`paygate benchmark — ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${useExe ? "executable" : "bundle"}, ${usePostgres ? `PostgreSQL, ${INSTANCES} instance(s) (RSS: the first)` : "SQLite"}, ${CONNECTIONS} connections, ${DURATION} s per scenario${heapEnv.NODE_OPTIONS ? `, NODE_OPTIONS="${SMALL_HEAP}"` : ""}`);
  log("");
  log("| scenario | req/s | p50 ms | p99 ms | errors | vs bare h3 | server peak RSS MB | paygate CPU ms/request |");
  log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    log(`| ${row.name} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${row.errors} | ${Math.round((row.rps / ceilingRps) * 100)}% | ${row.rss} | ${row.cpuPerRequest === undefined ? "" : row.cpuPerRequest.toFixed(2)} |`);
  }
  log("");
  log(`webhook fan-out (4 endpoints): ${received}/${expected} delivered; backlog of ${expected - receivedBefore} after the sales drained at ${fanout} deliveries/s`);
  log(`cold start to /health/ready 200 (median of 7): bundle ${coldBundle} ms${coldExe === undefined ? "" : `, executable ${coldExe} ms`}`);
  log(`server peak RSS over the whole run: ${heaviestRss} MB`);
  if (cpuProf) {
    const profiles = readdirSync(profDir).filter((f) => f.endsWith(".cpuprofile"));
    log(`CPU profile(s) in ${profDir}: ${profiles.join(", ")} (open in Chrome DevTools, or see the summary below)`);
    const profile = JSON.parse(readFileSync(join(profDir, profiles[profiles.length - 1]), "utf8"));
    const self = new Map();
    const deltas = profile.timeDeltas;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const node = byId.get(id);
      const key = `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.split("/").slice(-2).join("/")}:${node.callFrame.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + (deltas[i] ?? 0));
    });
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    log("top self time:");
    for (const [key, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) log(`  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
} finally {
  stopAll();
  rmSync(dataDir, { recursive: true, force: true });
  database?.stop();
}
