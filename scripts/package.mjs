#!/usr/bin/env node
// Builds the single executable dist/paygate (Linux x64) from dist/paygate.cjs, fully
// offline, with the better-sqlite3 addon embedded as the SEA asset "better_sqlite3.node"
// (loaded at run time by store/native-binding.ts).
//
//   npm run package                 # build + package, strips the node copy if `strip` exists
//   npm run package -- --no-strip   # keep node's symbols (bigger executable)
//
// It uses pkg's SEA builder (@yao-pkg/pkg/lib-es5/sea, an internal path of the pinned
// pkg 6.14.x) rather than the pkg CLI, which downloads Node and so fails offline. That
// builder has three traps this script works around:
//   - it runs `node --experimental-sea-config` with whatever `node` is first on PATH, and
//     a blob only works with the exact Node it was made by: PATH is prefixed with the
//     directory of the Node that runs this script, which is also the one copied.
//   - it injects with `npx postject` from a directory under os.tmpdir(): TMPDIR is set to
//     a folder inside the repo (.tmp/, git-ignored) so npx finds the local dev dependency
//     postject, and npm is forced offline so it can never try the registry.
//   - it swallows a failed injection (Promise.allSettled) and leaves a copy of plain node
//     as the output: the result is checked (not byte-identical to node, SEA fuse flipped,
//     `--version` prints paygate's version) before it replaces dist/paygate.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));

const NATIVE_ASSET = "better_sqlite3.node"; // must match store/native-binding.ts
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

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

function sha256(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

async function main() {
  const unknown = args.filter((a) => a !== "--no-strip");
  if (unknown.length > 0) fail(`unknown argument(s): ${unknown.join(" ")} (only --no-strip is accepted)`);
  if (process.platform !== "linux" || process.arch !== "x64") {
    fail(`this script builds a Linux x64 executable from the running Node; it runs on ${process.platform}-${process.arch}`);
  }
  const nodeMajor = Number(process.versions.node.split(".")[0]);
  if (nodeMajor !== 20) fail(`Node 20 is required (package.json engines), this is ${process.version}`);

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
    if (v.status !== 0 || v.stdout.trim() !== version) {
      fail(`the bundle is broken: \`node ${rel(bundle)} --version\` exited ${v.status} printing ${JSON.stringify(v.stdout.trim())} ${v.stderr.trim()}`);
    }
    console.log(`   ${rel(bundle)}: ${mb(statSync(bundle).size)}, --version -> ${version}`);
  });

  const addon = await step("locate the better-sqlite3 addon", () => {
    let pkgJson;
    try {
      pkgJson = require.resolve("better-sqlite3/package.json");
    } catch {
      fail("better-sqlite3 is not installed: run `npm ci` first");
    }
    const file = join(dirname(pkgJson), "build", "Release", NATIVE_ASSET);
    if (!existsSync(file)) fail(`${rel(file)} is missing: better-sqlite3's native build did not run (npm ci with install scripts allowed)`);
    console.log(`   ${rel(file)}: ${mb(statSync(file).size)}`);
    return file;
  });

  const baseNode = await step(`prepare the node binary (${process.version})`, () => {
    const original = process.execPath;
    console.log(`   source: ${original} (${mb(statSync(original).size)})`);
    if (!wantStrip) {
      console.log("   not stripped (--no-strip)");
      return original;
    }
    const copy = join(workDir, "node");
    copyFileSync(original, copy);
    chmodSync(copy, 0o755);
    const r = spawnSync("strip", ["--strip-all", copy], { encoding: "utf8" });
    if (r.error || r.status !== 0) {
      console.log(`   strip unavailable or failed (${r.error?.message ?? r.stderr.trim()}); using node unstripped`);
      return original;
    }
    console.log(`   stripped copy: ${mb(statSync(copy).size)}`);
    return copy;
  });

  const built = join(workDir, "paygate");
  await step("build the single executable (pkg SEA builder + postject)", async () => {
    const pkgVersion = require("@yao-pkg/pkg/package.json").version;
    try {
      require.resolve("postject/package.json");
    } catch {
      fail("postject is not installed (dev dependency): pkg would fall back to downloading it with npx");
    }
    console.log(`   @yao-pkg/pkg ${pkgVersion}, postject ${require("postject/package.json").version}`);
    const sea = require("@yao-pkg/pkg/lib-es5/sea").default;
    if (typeof sea !== "function") fail(`@yao-pkg/pkg ${pkgVersion} has no lib-es5/sea default export: the pinned version changed`);

    const env = {
      TMPDIR: process.env.TMPDIR,
      PATH: process.env.PATH,
      npm_config_offline: process.env.npm_config_offline,
      npm_config_update_notifier: process.env.npm_config_update_notifier,
    };
    // See the header: node on PATH must be this node, npx must find the local postject.
    process.env.TMPDIR = workDir;
    process.env.PATH = [dirname(process.execPath), join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter);
    process.env.npm_config_offline = "true";
    process.env.npm_config_update_notifier = "false";
    try {
      await sea(bundle, {
        targets: [{ nodeRange: "node20", platform: "linux", arch: "x64", output: built }],
        nodePath: baseNode,
        seaConfig: {
          disableExperimentalSEAWarning: true,
          useSnapshot: false,
          useCodeCache: true,
          assets: { [NATIVE_ASSET]: addon },
        },
      });
    } catch (error) {
      fail(`pkg's SEA builder failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    if (!existsSync(built)) fail("pkg's SEA builder wrote no executable");
  });

  await step("verify the executable", () => {
    const size = statSync(built).size;
    const plain = "the result is a plain node binary: postject's injection failed (pkg ignores that error); " +
      "check that node_modules/postject exists and `npx postject --help` works offline";
    if (size === statSync(baseNode).size && sha256(built) === sha256(baseNode)) fail(plain);
    const bytes = readFileSync(built);
    if (!bytes.includes(Buffer.from(`${SEA_FUSE}:1`))) fail(`${plain} (the SEA fuse is not flipped)`);
    console.log(`   differs from node and its SEA fuse is set`);

    chmodSync(built, 0o755);
    // Run it from an empty directory with an empty environment, as a user would.
    const probeDir = join(workDir, "probe");
    mkdirSync(probeDir);
    const v = run(built, ["--version"], { cwd: probeDir, env: {}, timeout: 30_000 });
    const printed = v.stdout.trim();
    if (/^v\d+\.\d+\.\d+$/.test(printed)) fail(`${plain} (\`--version\` printed node's version ${printed})`);
    if (v.status !== 0 || printed !== version) {
      fail(`\`paygate --version\` exited ${v.status ?? v.signal} printing ${JSON.stringify(printed)} (expected ${version}); stderr: ${v.stderr.trim()}`);
    }
    console.log(`   ./paygate --version -> ${printed} (empty environment, empty directory)`);
  });

  renameSync(built, output);
  const size = statSync(output).size;
  console.log(`\nwrote ${rel(output)}: ${mb(size)} (${size} bytes), ${wantStrip && baseNode !== process.execPath ? "stripped node" : "unstripped node"}, linux-x64, node ${process.version}, paygate ${version}`);
  console.log(`total time ${secs(performance.now() - started)}`);
}

try {
  await main();
} catch (error) {
  const message = error instanceof PackageError ? error.message : (error?.stack ?? String(error));
  console.error(`\npackage failed: ${message}`);
  process.exitCode = 1;
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
