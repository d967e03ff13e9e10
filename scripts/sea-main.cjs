// The single executable's entry point (its SEA "main"): it compiles the bundle
// (asset "paygate.cjs") with a V8 code cache (asset "paygate.codecache") and runs it.
//
// Node's own `useCodeCache` caches the bundle as compiled before it runs, which holds
// little more than its top level: V8 compiles every function lazily, at its first
// call, and a start of `serve` calls thousands. The cache embedded here is taken after
// a real start instead (`--write-code-cache`, run by scripts/package.mjs with the
// embedded Node and the same execArgv), so those functions come compiled.
//
//   node sea-main.cjs --write-code-cache <outDir> <bundle>
//
// starts `<bundle> serve` on a throwaway data dir and a free loopback port, waits for
// the first 200 on /health/ready and writes the two assets to <outDir>: the bundle as
// the executable compiles it (inside its CommonJS wrapper) and the cache of everything
// compiled so far.
//
// The wrapper is in the asset, not added at each start: a source of over 1 MB becomes
// a malloc'd external string, and a wrapped copy made at start would leave that one
// to be freed, which raises glibc's mmap threshold to its size (and its trim threshold
// to twice that) for the rest of the process: measured, about 25 MB of freed memory
// then stayed in the V8 worker threads' malloc arenas under load. The asset's string
// is the script's own source and lives as long as the process.
//
// V8 checks a cache against its source and its own version and flags and ignores one
// that does not match (the program then runs, only slower): the executable reports
// which happened in `paygate self-check` ("code_cache").
"use strict";
const { Script } = require("node:vm");

const BUNDLE_ASSET = "paygate.cjs";
const CACHE_ASSET = "paygate.codecache";
const CODE_CACHE_STATE = Symbol.for("paygate.codeCache");

/** The CommonJS wrapper; V8's cache is keyed by the source it was made from, so both modes compile this text. */
function wrap(bundleSource) {
  return `(function (exports, require, module, __filename, __dirname) {${bundleSource}\n})`;
}

function compile(wrappedSource, filename, cachedData) {
  return new Script(wrappedSource, { filename, cachedData });
}

function run(script, moduleRequire, filename) {
  const module = { exports: {} };
  script.runInThisContext()(module.exports, moduleRequire, module, filename, require("node:path").dirname(filename));
}

function runEmbedded(sea) {
  const cache = sea.getRawAsset(CACHE_ASSET);
  // Buffer's decoder, not getAsset(name, "utf8"): that one goes through ICU's TextDecoder.
  const source = Buffer.from(sea.getRawAsset(BUNDLE_ASSET)).toString("utf8");
  const script = compile(source, process.execPath, cache.byteLength > 0 ? Buffer.from(cache) : undefined);
  globalThis[CODE_CACHE_STATE] = cache.byteLength === 0 ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
  run(script, require, process.execPath);
}

async function freePort() {
  const server = require("node:net").createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function writeCodeCache(outDir, bundle) {
  const fs = require("node:fs");
  const path = require("node:path");
  const dataDir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "paygate-code-cache-"));
  const port = await freePort();
  process.argv = [process.execPath, bundle, "serve", "--port", String(port), "--data", dataDir, "--log-level", "warn"];
  const wrapped = wrap(fs.readFileSync(bundle, "utf8"));
  const script = compile(wrapped, bundle, undefined);
  run(script, require("node:module").createRequire(bundle), bundle);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (Date.now() > deadline) throw new Error(`no 200 on /health/ready within 30 s (last status ${status})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  fs.writeFileSync(path.join(outDir, BUNDLE_ASSET), wrapped);
  fs.writeFileSync(path.join(outDir, CACHE_ASSET), script.createCachedData());
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

const sea = require("node:sea");
if (sea.isSea()) {
  runEmbedded(sea);
} else if (process.argv[2] === "--write-code-cache" && process.argv.length === 5) {
  writeCodeCache(process.argv[3], process.argv[4]).catch((error) => {
    console.error(`could not write the code cache: ${error.message}`);
    process.exit(1);
  });
} else {
  console.error("usage: node sea-main.cjs --write-code-cache <outDir> <bundle> (inside the executable it runs the embedded bundle)");
  process.exit(2);
}
