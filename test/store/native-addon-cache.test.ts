import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { placeAddon } from "../../store/native-binding";

/** Where the single executable writes its SQLite addon before loading it. */
describe("the executable's addon cache", () => {
  const roots: string[] = [];
  const root = () => {
    const dir = mkdtempSync(join(tmpdir(), "paygate-addon-root-"));
    chmodSync(dir, 0o1777);
    roots.push(dir);
    return dir;
  };
  afterEach(() => roots.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const bytes = Buffer.from("the addon's bytes");
  let reads = 0;
  const addon = {
    digest: createHash("sha256").update(bytes).digest("hex"),
    bytes: () => {
      reads++;
      return bytes;
    },
  };
  const uid = process.getuid?.() ?? 0;

  it("is a directory of this user's, closed to others, named by uid so other users get their own", () => {
    const base = root();
    const file = placeAddon(addon, base);
    expect(file.startsWith(join(base, `paygate-native-${uid}`))).toBe(true);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(statSync(join(base, `paygate-native-${uid}`)).mode & 0o777).toBe(0o700);
  });

  it("replaces a file whose bytes are not the addon's before it is loaded", () => {
    const base = root();
    const file = placeAddon(addon, base);
    writeFileSync(file, "planted library");
    expect(placeAddon(addon, base)).toBe(file);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it("reads the embedded bytes only when the file there is missing or wrong", () => {
    const base = root();
    reads = 0;
    placeAddon(addon, base);
    expect(reads).toBe(1);
    placeAddon(addon, base);
    expect(reads).toBe(1);
  });

  it("refuses embedded bytes that do not match their digest", () => {
    expect(() => placeAddon({ digest: addon.digest, bytes: () => Buffer.from("damaged") }, root())).toThrow(/damaged/);
  });

  it("refuses a directory that others can write to or that another user owns", () => {
    const open = root();
    mkdirSync(join(open, `paygate-native-${uid}`), { mode: 0o777 });
    chmodSync(join(open, `paygate-native-${uid}`), 0o777);
    expect(() => placeAddon(addon, open)).toThrow(/closed to others/);
    if (uid === 0) {
      const foreign = root();
      mkdirSync(join(foreign, "paygate-native-0"), { mode: 0o700 });
      chownSync(join(foreign, "paygate-native-0"), 65534, 65534);
      expect(() => placeAddon(addon, foreign)).toThrow(/closed to others/);
    }
  });
});
