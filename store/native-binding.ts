import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Name of the better-sqlite3 addon inside the single executable's assets. */
export const NATIVE_ASSET = "better_sqlite3.node";
/** Its SHA-256 (hex), a separate asset written by scripts/package.mjs. */
export const NATIVE_DIGEST_ASSET = "better_sqlite3.node.sha256";

const nodeRequire = createRequire(import.meta.url);

interface SeaModule {
  isSea(): boolean;
  getRawAsset(name: string): ArrayBuffer;
}

function seaModule(): SeaModule | undefined {
  try {
    const sea = nodeRequire("node:sea") as SeaModule;
    return sea.isSea() ? sea : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The better-sqlite3 addon for `new Database(file, { nativeBinding })`.
 *
 * The bundle cannot carry a `.node` file, so from the bundle (or the sources) this is
 * the path of the addon that `npm ci` built; inside the single executable it is the
 * embedded asset, written once to a content-addressed file and loaded from there.
 */
export function nativeBinding(): string | object {
  const sea = seaModule();
  if (!sea) {
    const pkg = nodeRequire.resolve("better-sqlite3/package.json");
    return join(dirname(pkg), "build", "Release", NATIVE_ASSET);
  }
  // The digest, not the addon's 1.7 MB, is read at each start: every page of the
  // executable a start reads stays in its RSS for as long as it runs.
  const digest = Buffer.from(sea.getRawAsset(NATIVE_DIGEST_ASSET)).toString("latin1").trim();
  const file = placeAddon({ digest, bytes: () => new Uint8Array(sea.getRawAsset(NATIVE_ASSET)) }, tmpdir());
  const addon = { exports: {} as object };
  process.dlopen(addon, file);
  return addon.exports;
}

/**
 * Writes the addon where this process will load it from: a directory of this user's
 * own under `root` (`paygate-native-<uid>`), so several OS users can each run paygate,
 * and nobody else can put a library there for it to load. The directory must be a real
 * directory owned by this user and closed to others; a file already there is used only
 * if its bytes hash to the addon's digest.
 */
export function placeAddon(addon: { digest: string; bytes(): Uint8Array }, root: string): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(root, `paygate-native-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a directory of this user's closed to others; remove it, or set TMPDIR to another directory`);
  }
  const file = join(dir, `better_sqlite3-${addon.digest.slice(0, 16)}.node`);
  if (fileDigest(file) !== addon.digest) {
    const bytes = addon.bytes();
    if (createHash("sha256").update(bytes).digest("hex") !== addon.digest) throw new Error("the embedded SQLite addon does not match its digest: the executable is damaged");
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, bytes, { mode: 0o700 });
    renameSync(partial, file);
  }
  return file;
}

/** SHA-256 of a file, read in small chunks (no 1.7 MB buffer), or undefined if it cannot be read. */
function fileDigest(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    const hash = createHash("sha256");
    const chunk = Buffer.allocUnsafe(64 * 1024);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
    return hash.digest("hex");
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
