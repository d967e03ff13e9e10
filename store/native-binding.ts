import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Name of the better-sqlite3 addon inside the single executable's assets. */
export const NATIVE_ASSET = "better_sqlite3.node";

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
  const file = placeAddon(Buffer.from(sea.getRawAsset(NATIVE_ASSET)), tmpdir());
  const addon = { exports: {} as object };
  process.dlopen(addon, file);
  return addon.exports;
}

/**
 * Writes the addon where this process will load it from: a directory of this user's
 * own under `root` (`paygate-native-<uid>`), so several OS users can each run paygate,
 * and nobody else can put a library there for it to load. The directory must be a real
 * directory owned by this user and closed to others; a file already there is used only
 * if its bytes are the addon's.
 */
export function placeAddon(bytes: Buffer, root: string): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(root, `paygate-native-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a directory of this user's closed to others; remove it, or set TMPDIR to another directory`);
  }
  const digest = createHash("sha256").update(bytes).digest("hex");
  const file = join(dir, `better_sqlite3-${digest.slice(0, 16)}.node`);
  let present: Buffer | undefined;
  try {
    present = readFileSync(file);
  } catch {
    present = undefined;
  }
  if (!present || createHash("sha256").update(present).digest("hex") !== digest) {
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, bytes, { mode: 0o700 });
    renameSync(partial, file);
  }
  return file;
}
