#!/usr/bin/env node
// npm run bench [-- --exe] [-- --cpu-prof] [-- --small-heap (bundle only)] [-- --duration 10]
//               [-- --only sale,get,...] [-- --sweep] [-- --grow 1000000 (SQLite only)]
//               [-- --postgres [--instances N]]
//
// Boots paygate (the bundle, or with --exe the single executable) on loopback with a
// fresh data dir and the rate limit off, drives each scenario with autocannon for a
// fixed time, and prints requests/s, p50, p99, errors, the ratio to the ceiling (a bare
// h3 v2 endpoint parsing the sale's JSON POST body and answering JSON, measured in the
// same run), and the server's peak RSS. Then: authorize p99 at half its peak rate,
// webhook fan-out to a local receiver, cold start to /health/ready. Every write
// carries its own Idempotency-Key.
//
// --only runs a subset (scenario keys: tokenize authorize sale capture get list replay
// paced webhooks cold). --sweep adds sale at 1, 8, 32 and 64 connections. --grow N
// then seeds N payments (each with its two events and its idempotency record) straight
// into the store and repeats sale, GET and list on the grown store. --postgres runs the
// same scenarios on PostgreSQL (scripts/bench/postgres.mjs) with N instances of paygate
// on it (default 1): each scenario's connections are split evenly over the instances.
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { dropCachedPages } from "./exe-toolchain.mjs";

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
const onlyArg = args.indexOf("--only");
const only = onlyArg >= 0 ? new Set(args[onlyArg + 1].split(",")) : undefined;
const wants = (key) => only === undefined || only.has(key);
const sweep = args.includes("--sweep");
const growArg = args.indexOf("--grow");
const GROW = growArg >= 0 ? Number(args[growArg + 1]) : 0;
const usePostgres = args.includes("--postgres");
const instancesArg = args.indexOf("--instances");
const INSTANCES = instancesArg >= 0 ? Number(args[instancesArg + 1]) : 1;
if (!(Number.isInteger(INSTANCES) && INSTANCES >= 1) || (INSTANCES > 1 && !usePostgres)) throw new Error("--instances N (1 or more) needs --postgres");
const bundle = join(root, "dist", "paygate.cjs");
const exe = join(root, "dist", "paygate");

function log(line) {
  process.stdout.write(`${line}\n`);
}

if (!existsSync(bundle)) execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
if (useExe && !existsSync(exe)) throw new Error("dist/paygate is missing: run npm run package first");
// Its file-backed RSS would otherwise depend on what last read the file (exe-toolchain.mjs).
if (useExe) dropCachedPages(exe);
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

/** What the server's RSS is made of now: V8 and malloc (anonymous), and its executable's pages (file). */
function rssBreakdown(pid) {
  const mbOf = (text, key) => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN) / 1024);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  return `RssAnon ${mbOf(status, "RssAnon")} MB, RssFile ${mbOf(status, "RssFile")} MB of which ${mbOf(rollup, "FilePmdMapped")} MB mapped as 2 MB folios`;
}

/** CPU time (user + system, all threads) the processes used so far, in ms; Linux ticks are 10 ms. */
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/** Where every paygate instance serves; a run aimed at the first is spread over all of them. */
let bases = [];

let counter = 0;
const uniqueKey = () => `bench-${process.pid}-${++counter}`;

async function run(name, options) {
  const connections = options.connections ?? CONNECTIONS;
  const targets = bases.length > 1 && options.url === bases[0] ? bases.slice(0, connections) : [options.url];
  // The connections, a fixed `amount` of requests (which replaces the fixed duration) and an overall rate, split as evenly as they go.
  const share = (total, i) => Math.floor(total / targets.length) + (i < total % targets.length ? 1 : 0);
  const results = await Promise.all(
    targets.map((url, i) =>
      autocannon({
        ...(options.amount === undefined && { duration: DURATION }),
        ...options,
        url,
        connections: share(connections, i),
        ...(options.amount !== undefined && { amount: share(options.amount, i) }),
        ...(options.overallRate !== undefined && { overallRate: Math.max(1, share(options.overallRate, i)) }),
      }),
    ),
  );
  // Over several instances throughputs add up; the latencies shown are the worst instance's.
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

/**
 * The storage engine under test, in one place: how paygate is started on it (how many
 * instances, with which arguments and environment) and how a grown store is seeded.
 * SQLite: a data dir; the server opens paygate.db in it. PostgreSQL: a database
 * (scripts/bench/postgres.mjs) that N instances share, with the master key they must
 * share; the data dir only holds what stays local.
 */
function sqliteEngine() {
  return {
    name: "SQLite",
    instances: 1,
    dataDir: mkdtempSync(join(tmpdir(), "paygate-bench-")),
    async start() {},
    serverArgs() {
      return ["--data", this.dataDir];
    },
    serverEnv() {
      return {};
    },
    async grow(count) {
      const { growSqlite } = await import("./bench/grow-sqlite.mjs");
      return growSqlite(join(this.dataDir, "paygate.db"), count);
    },
    cleanup() {
      rmSync(this.dataDir, { recursive: true, force: true });
    },
  };
}

function postgresEngine(instances) {
  return {
    name: `PostgreSQL, ${instances} instance${instances === 1 ? "" : "s"}`,
    instances,
    dataDir: mkdtempSync(join(tmpdir(), "paygate-bench-")),
    masterKey: randomBytes(32).toString("base64"),
    database: undefined,
    async start() {
      const { benchDatabase } = await import("./bench/postgres.mjs");
      this.database = await benchDatabase();
    },
    serverArgs() {
      return ["--data", this.dataDir];
    },
    serverEnv() {
      return { PAYGATE_DATABASE_URL: this.database.url, PAYGATE_MASTER_KEY: this.masterKey };
    },
    // Seeding is written for SQLite only (scripts/bench/grow-sqlite.mjs).
    grow: undefined,
    cleanup() {
      rmSync(this.dataDir, { recursive: true, force: true });
      this.database?.stop();
    },
  };
}

const engine = usePostgres ? postgresEngine(INSTANCES) : sqliteEngine();
if (GROW > 0 && !engine.grow) {
  engine.cleanup();
  process.stderr.write(`--grow seeds SQLite only (scripts/bench/grow-sqlite.mjs), not ${engine.name}: run it without --postgres\n`);
  process.exit(2);
}

const rows = [];
const profDir = join(root, ".tmp", "prof");
try {
  await engine.start();
  // The ceiling: the sale's own request (headers and JSON body), parsed and answered
  // with JSON by a bare h3 endpoint.
  const bare = await startProcess(process.execPath, [join(root, "scripts", "bench", "bare-h3.mjs")]);
  const bareUrl = bare.line.replace("listening on ", "");
  const bareBody = { amount: 1000, currency: "usd", gateway_token: "tok_test_000000000000000000000000" };
  const bareCpu = cpuMs([bare.child.pid]);
  const ceiling = await run("ceiling: bare h3 JSON POST", { url: bareUrl, requests: [writeRequest("/v1/payments/sale", "sk_test_bench", () => bareBody)] });
  rows.push({ ...ceiling, cpu: (cpuMs([bare.child.pid]) - bareCpu) / ceiling.total, rss: peakRssMb(bare.child.pid) });
  bare.child.kill("SIGTERM");

  // paygate.
  const nodeArgs = cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const command = useExe ? exe : process.execPath;
  const startInstance = (serverArgs, env = {}) =>
    startProcess(command, useExe ? serverArgs : [...nodeArgs, bundle, ...serverArgs], { PAYGATE_RATE_LIMIT: "0", ...env, ...engine.serverEnv(), ...heapEnv });
  /** The sandbox (its first line: the keys and its address), then the engine's other instances as `serve` on the same store. */
  const startPaygate = async () => {
    const first = await startInstance(["sandbox", "--json", "--port", "0", ...engine.serverArgs()]);
    const started = { children: [first.child], line: first.line, bases: [JSON.parse(first.line).base_url] };
    for (let i = 1; i < engine.instances; i++) {
      const instance = await startInstance(["serve", "--port", "0", ...engine.serverArgs()], { PAYGATE_LOG_LEVEL: "warn" });
      started.children.push(instance.child);
      started.bases.push(/listening on (\S+)/.exec(instance.line)[1]);
    }
    return started;
  };
  let paygate = await startPaygate();
  const sandbox = JSON.parse(paygate.line);
  bases = paygate.bases;
  let base = bases[0];
  const { secret, publishable } = sandbox.keys;
  // The CPU a request costs is every instance's together (not the database's); RSS is the first instance's.
  let pids = paygate.children.map((child) => child.pid);
  let pid = pids[0];
  const token = (await api(base, publishable, "/v1/tokens", { card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } })).token;
  const card = { card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } };
  const saleRequest = writeRequest("/v1/payments/sale", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token }));
  const authorizeRequest = writeRequest("/v1/payments/authorize", secret, () => ({ amount: 1000, currency: "usd", gateway_token: token, capture_method: "manual" }));

  const scenario = async (name, options) => {
    const cpuBefore = cpuMs(pids);
    const result = await run(name, { url: base, ...options });
    const row = { ...result, cpu: (cpuMs(pids) - cpuBefore) / result.total, rss: peakRssMb(pid) };
    rows.push(row);
    return row;
  };
  const paymentId = (await api(base, secret, "/v1/payments/sale", { amount: 1000, currency: "usd", gateway_token: token })).id;
  const getRequest = { method: "GET", path: `/v1/payments/${paymentId}`, headers: { authorization: `Bearer ${secret}` } };
  const listRequest = { method: "GET", path: "/v1/payments?limit=10", headers: { authorization: `Bearer ${secret}` } };

  // Unmeasured: the JIT and the caches get to the state the later scenarios run in.
  const warmUp = async () => {
    for (const request of [saleRequest, getRequest, listRequest]) await run("warm-up", { url: base, duration: 3, requests: [request] });
  };
  await warmUp();

  if (wants("tokenize")) await scenario("tokenize", { requests: [writeRequest("/v1/tokens", publishable, () => card)] });
  let authorizeRps;
  if (wants("authorize")) authorizeRps = (await scenario("authorize (manual)", { requests: [authorizeRequest] })).rps;
  const saleRow = wants("sale") ? await scenario("sale", { requests: [saleRequest] }) : undefined;

  if (wants("capture")) {
    // Captures need authorizations: prepare as many as the authorize scenario managed in the same time.
    const toPrepare = Math.min(200_000, Math.max(1000, Math.round((authorizeRps ?? 1000) * DURATION)));
    const prepared = [];
    await autocannon({
      url: base,
      connections: CONNECTIONS,
      amount: toPrepare,
      requests: [authorizeRequest],
      setupClient(client) {
        client.on("body", (body) => {
          const id = JSON.parse(body.toString()).id;
          if (id) prepared.push(id);
        });
      },
    });
    let next = 0;
    await scenario("capture (prepared authorizations)", {
      amount: prepared.length,
      requests: [writeRequest("/v1/payments/capture", secret, () => ({ payment_id: prepared[next++ % prepared.length] }))],
    });
  }
  const getRow = wants("get") ? await scenario("GET payment", { requests: [getRequest] }) : undefined;
  const listRow = wants("list") ? await scenario("list payments (limit 10)", { requests: [listRequest] }) : undefined;
  if (wants("replay")) {
    const replayBody = JSON.stringify({ amount: 1000, currency: "usd", gateway_token: token });
    await fetch(`${base}/v1/payments/sale`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "idempotency-key": "bench-replay", "content-type": "application/json" }, body: replayBody });
    await scenario("idempotent replay (sale)", {
      requests: [{ method: "POST", path: "/v1/payments/sale", headers: { authorization: `Bearer ${secret}`, "idempotency-key": "bench-replay", "content-type": "application/json" }, body: replayBody }],
    });
  }

  if (wants("paced") && authorizeRps !== undefined) {
    // Latency at half of the peak authorize rate: paced evenly (8 connections, each at
    // an eighth of the rate), and as autocannon's overallRate over all connections,
    // which releases requests in bursts.
    const half = Math.max(8, Math.round(authorizeRps / 2));
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
  }

  if (sweep) {
    for (const connections of [1, 8, 32, 64]) await scenario(`sale, ${connections} connection${connections === 1 ? "" : "s"}`, { connections, requests: [saleRequest] });
  }

  let fanoutLine;
  if (wants("webhooks")) {
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
    await autocannon({ url: base, connections: CONNECTIONS, amount: sales, requests: [saleRequest] });
    const expected = sales * 2 * endpoints.length;
    const backlogStart = performance.now();
    const cpuBefore = cpuMs(pids);
    const receivedBefore = received;
    const deadline = Date.now() + 180_000;
    while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const drained = received - receivedBefore;
    const fanout = drained > 0 ? Math.round(drained / ((last - backlogStart) / 1000)) : 0;
    const cpuPerDelivery = drained > 0 ? ((cpuMs(pids) - cpuBefore) / drained).toFixed(3) : "?";
    receiver.close();
    fanoutLine = `webhook fan-out (4 endpoints): ${received}/${expected} delivered; backlog of ${expected - receivedBefore} after the sales drained at ${fanout} deliveries/s, ${cpuPerDelivery} ms of server CPU each`;
    for (const id of endpoints) {
      await fetch(`${base}/v1/webhook_endpoints/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${secret}` } });
    }
  }
  const heaviestRss = peakRssMb(pid);
  const rssParts = rssBreakdown(pid);

  const stopPaygate = async () => {
    await Promise.all(
      paygate.children.map((child) => {
        child.kill("SIGTERM");
        return new Promise((r) => child.once("exit", r)).then(() => children.delete(child));
      }),
    );
  };
  await stopPaygate();

  let growLine;
  if (GROW > 0) {
    // Seeded with the server stopped, then the same scenarios on the grown store.
    const seeded = await engine.grow(GROW);
    growLine = `grown store: ${seeded.payments} payments, ${seeded.events} events, ${seeded.idempotency} idempotency records seeded in ${seeded.seconds} s (${seeded.sizeMb} MB on disk)`;
    paygate = await startPaygate();
    bases = paygate.bases;
    base = bases[0];
    pids = paygate.children.map((child) => child.pid);
    pid = pids[0];
    await warmUp();
    const grown = (row) => ` (grown: ${row ? Math.round((rows.at(-1).rps / row.rps) * 100) : "?"}% of empty)`;
    await scenario(`sale, ${GROW} stored`, { requests: [saleRequest] });
    rows.at(-1).name += grown(saleRow);
    await scenario(`GET payment, ${GROW} stored`, { requests: [getRequest] });
    rows.at(-1).name += grown(getRow);
    await scenario(`list payments (limit 10), ${GROW} stored`, { requests: [listRequest] });
    rows.at(-1).name += grown(listRow);
    await stopPaygate();
  }

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
  const coldBundle = wants("cold") ? await coldStart(process.execPath, [bundle]) : undefined;
  const coldExe = wants("cold") && existsSync(exe) ? await coldStart(exe, []) : undefined;

  const ceilingRps = rows[0].rps;
  log("");
  log(`paygate benchmark on ${engine.name}${engine.instances > 1 ? " (RSS: the first instance's)" : ""} — ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${useExe ? "executable" : "bundle"}, ${CONNECTIONS} connections, ${DURATION} s per scenario${heapEnv.NODE_OPTIONS ? `, NODE_OPTIONS="${SMALL_HEAP}"` : ""}`);
  log("");
  log("| scenario | req/s | p50 ms | p99 ms | errors | vs ceiling | server CPU ms/req | server peak RSS MB |");
  log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    log(`| ${row.name} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${row.errors} | ${Math.round((row.rps / ceilingRps) * 100)}% | ${row.cpu === undefined ? "" : row.cpu.toFixed(2)} | ${row.rss} |`);
  }
  log("");
  if (fanoutLine) log(fanoutLine);
  if (growLine) log(growLine);
  if (coldBundle !== undefined) log(`cold start to /health/ready 200 (median of 7, a fresh SQLite data dir each): bundle ${coldBundle} ms${coldExe === undefined ? "" : `, executable ${coldExe} ms`}`);
  log(`server peak RSS over the whole run: ${heaviestRss} MB (at the end: ${rssParts})`);
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
  engine.cleanup();
}
