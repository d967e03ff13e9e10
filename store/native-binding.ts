import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
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
  const bytes = Buffer.from(sea.getRawAsset(NATIVE_ASSET));
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), "paygate-native");
  const file = join(dir, `better_sqlite3-${digest}.node`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, bytes, { mode: 0o700 });
    renameSync(partial, file);
  }
  const addon = { exports: {} as object };
  process.dlopen(addon, file);
  return addon.exports;
}
