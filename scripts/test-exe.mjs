#!/usr/bin/env node
// Smoke test of the single executable dist/paygate (build it with `npm run package`).
//
// Copies it alone into a fresh directory under os.tmpdir() (no node_modules there or
// above), runs `--version` with an empty environment (it must name the Node pinned in
// package.json "config"."executableNode"), starts `serve --port 0` with a PATH holding
// no node, waits for "paygate listening on <url>", requires
// GET /health/ready -> 200 {"status":"ready"}, prints the time from spawn to that first
// 200, requires GET /health to report the same versions, stops it with SIGTERM (exit
// code 0 within 10 s) and removes the directory.
// Last line: "N passed, M failed"; exit code 1 when anything failed. The server is
// started in its own process group, which is killed on every way out of this script.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const exe = join(root, "dist", "paygate");
const { version, config } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const node = `v${config.executableNode}`;

const LISTEN_TIMEOUT_MS = 15_000;
const READY_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 10_000;

// Every check, in order; a check that cannot run because an earlier one failed counts
// as failed, so the total is always the same.
const CHECKS = [
  "dist/paygate exists",
  "run directory is isolated (no node_modules in it or above it)",
  "./paygate --version prints the package version and the pinned Node (empty environment)",
  "./paygate serve prints 'paygate listening on <url>' within 15 s",
  "GET /health/ready -> 200 {status: ready}",
  "GET /health reports paygate's and the pinned Node's versions",
  "the data directory is created and used",
  "SIGTERM -> exit code 0 within 10 s",
  "temp directory removed",
];
const results = new Map();
let passed = 0;
let failed = 0;

function record(index, ok, detail = "") {
  const name = CHECKS[index];
  results.set(name, ok);
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? "ok  " : "FAIL"} ${index + 1}. ${name}${detail ? ` - ${detail}` : ""}`);
  return ok;
}

let tmp;
let child;
let childExited = false;
const output = { stdout: "", stderr: "" };

function killServer() {
  if (child && !childExited) {
    try {
      process.kill(-child.pid, "SIGKILL"); // its whole process group
    } catch {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

function removeTmp() {
  if (!tmp) return true;
  try {
    rmSync(tmp, { recursive: true, force: true });
  } catch {
    // reported below
  }
  return !existsSync(tmp);
}

// Never leave the server behind, whichever way this script ends.
process.on("exit", killServer);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.error(`\ninterrupted by ${signal}`);
    killServer();
    removeTmp();
    process.exit(1);
  });
}

function tail(text, lines = 15) {
  return text.trimEnd().split("\n").slice(-lines).map((l) => `    | ${l}`).join("\n");
}

function showServerOutput() {
  if (output.stdout.trim()) console.log(`  server stdout:\n${tail(output.stdout)}`);
  if (output.stderr.trim()) console.log(`  server stderr:\n${tail(output.stderr)}`);
}

function waitFor(predicate, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const tick = () => {
      const value = predicate();
      if (value) return resolve(value);
      if (Date.now() - started >= timeoutMs) return resolve(undefined);
      setTimeout(tick, 20);
    };
    tick();
  });
}

async function run() {
  // 1. The executable.
  if (!record(0, existsSync(exe), existsSync(exe) ? exe : `${exe} is missing: run \`npm run package\``)) return 0;

  // 2. A fresh, isolated directory holding only the executable.
  tmp = mkdtempSync(join(tmpdir(), "paygate-exe-"));
  const binary = join(tmp, "paygate");
  copyFileSync(exe, binary);
  chmodSync(binary, 0o755);
  const emptyBin = join(tmp, "empty-bin"); // the PATH: no node, no anything
  const tmpForServer = join(tmp, "tmp"); // where the addon is extracted: cleaned up with tmp
  mkdirSync(emptyBin);
  mkdirSync(tmpForServer);
  const nodeModules = [];
  for (let dir = tmp; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules"))) nodeModules.push(join(dir, "node_modules"));
    if (dirname(dir) === dir) break;
  }
  if (!record(1, nodeModules.length === 0, nodeModules.length ? `found ${nodeModules.join(", ")} (set TMPDIR elsewhere)` : tmp)) return 1;

  // 3. --version, exactly like `env -i ./paygate --version`.
  const v = spawnSync("./paygate", ["--version"], { cwd: tmp, env: {}, encoding: "utf8", timeout: 10_000 });
  const printed = (v.stdout ?? "").trim();
  const expectedVersion = `paygate ${version} (node ${node})`;
  const versionOk = v.status === 0 && printed === expectedVersion;
  let detail = `printed ${JSON.stringify(printed)}`;
  if (!versionOk) {
    detail += `, expected ${JSON.stringify(expectedVersion)}, exit ${v.status ?? v.signal ?? v.error?.message}`;
    if (/^v\d+\.\d+\.\d+$/.test(printed)) detail += " (that is node's version: a plain node binary, the SEA blob was not injected)";
    if (v.stderr?.trim()) detail += `\n${tail(v.stderr)}`;
  }
  if (!record(2, versionOk, detail)) return 2;

  // 4. serve, from the temp dir, with a PATH that has no node in it.
  const dataDir = join(tmp, "data");
  const spawnedAt = performance.now();
  child = spawn("./paygate", ["serve", "--port", "0", "--data", dataDir], {
    cwd: tmp,
    env: { PATH: emptyBin, TMPDIR: tmpForServer },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // own process group, killed as a whole on failure
  });
  let exit;
  let spawnError;
  child.on("error", (error) => {
    spawnError = error;
    childExited = true;
  });
  child.on("exit", (code, signal) => {
    childExited = true;
    exit = { code, signal, at: performance.now() };
  });
  child.stdout.setEncoding("utf8").on("data", (d) => (output.stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (output.stderr += d));

  const url = await waitFor(() => {
    const m = /^paygate listening on (\S+)$/m.exec(output.stdout);
    return m ? m[1] : childExited ? "exited" : undefined;
  }, LISTEN_TIMEOUT_MS);
  const listenMs = performance.now() - spawnedAt;
  if (!url || url === "exited") {
    const why = spawnError ? `spawn failed: ${spawnError.message}`
      : url === "exited" ? `the server exited early (code ${exit?.code}, signal ${exit?.signal})`
      : `no line after ${LISTEN_TIMEOUT_MS / 1000} s`;
    record(3, false, why);
    showServerOutput();
    return 3;
  }
  record(3, true, `${url} after ${Math.round(listenMs)} ms`);

  // 5. Readiness; the time to the first 200 is the cold start users see.
  const readyUrl = new URL("/health/ready", url).href;
  let attempts = 0;
  let last = "no answer";
  let firstOkMs;
  let body;
  const readyDeadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < readyDeadline && !childExited) {
    attempts += 1;
    try {
      const res = await fetch(readyUrl, { signal: AbortSignal.timeout(2_000) });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 200)}`;
      if (res.status === 200) {
        firstOkMs = performance.now() - spawnedAt;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        break;
      }
    } catch (error) {
      last = error instanceof Error ? (error.cause?.message ?? error.message) : String(error);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyOk = firstOkMs !== undefined && body?.status === "ready";
  if (!record(4, readyOk,
    readyOk ? `first 200 ${Math.round(firstOkMs)} ms after spawn (${attempts} request${attempts > 1 ? "s" : ""}), ${JSON.stringify(body)}`
      : `after ${attempts} request(s): ${last}`)) {
    showServerOutput();
    return 4;
  }
  console.log(`  cold start (spawn -> first 200 on /health/ready): ${Math.round(firstOkMs)} ms`);

  // 6. Liveness names both versions.
  let health;
  try {
    health = await (await fetch(new URL("/health", url), { signal: AbortSignal.timeout(2_000) })).json();
  } catch (error) {
    health = { error: error instanceof Error ? error.message : String(error) };
  }
  record(5, health?.version === version && health?.node === node, `${JSON.stringify(health)}, expected version ${version}, node ${node}`);

  // 7. It really used --data.
  const dataFiles = existsSync(dataDir) ? readdirSync(dataDir) : [];
  record(6, dataFiles.length > 0, dataFiles.length ? `${dataDir}: ${dataFiles.join(", ")}` : `${dataDir} is missing or empty`);

  // 8. Graceful shutdown.
  const termAt = performance.now();
  child.kill("SIGTERM");
  await waitFor(() => childExited, STOP_TIMEOUT_MS);
  if (!childExited) {
    record(7, false, `still running ${STOP_TIMEOUT_MS / 1000} s after SIGTERM (killed)`);
    showServerOutput();
    return 7;
  }
  const stopOk = exit?.code === 0;
  record(7, stopOk, `exit code ${exit?.code}${exit?.signal ? `, signal ${exit.signal}` : ""} after ${Math.round((exit?.at ?? performance.now()) - termAt)} ms`);
  if (!stopOk) showServerOutput();
  return 7;
}


try {
  await run();
} catch (error) {
  console.log(`error: ${error?.stack ?? error}`);
  showServerOutput();
} finally {
  killServer();
}
// Checks that could not run after a failure count as failed.
for (let i = 0; i < CHECKS.length - 1; i += 1) {
  if (!results.has(CHECKS[i])) record(i, false, "not run (an earlier check failed)");
}
const removed = removeTmp();
record(CHECKS.length - 1, removed, tmp ? tmp : "nothing to remove");
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
