import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { freshDataDir } from "../support/harness";

const ROOT = resolve(__dirname, "../..");

/**
 * Creates the database file and holds its write lock for `ms`, so that processes
 * started meanwhile all reach their first write together when it lets go.
 */
function holdFreshDatabase(file: string, ms: number): Promise<void> {
  const script = `
    const db = new (require("better-sqlite3"))(${JSON.stringify(file)});
    db.pragma("journal_mode = WAL");
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("holding\\n");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
    db.exec("COMMIT");`;
  return new Promise((resolveHeld, reject) => {
    const child = spawn(process.execPath, ["-e", script], { cwd: ROOT });
    child.stdout.on("data", () => resolveHeld());
    child.on("error", reject);
    child.on("exit", (code) => code === 0 || reject(new Error(`lock holder exited with ${code}`)));
  });
}

/**
 * Operators start several processes on one data dir (a second `serve`, the CLI), and
 * on a fresh or upgraded store each of them migrates at start. The migrations must be
 * applied once, whoever comes first, and nobody may fail on a half-made schema.
 */
describe("migrations from several processes at once", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("six `paygate migrate` released together on one fresh data dir all succeed, and each migration is applied once", async () => {
    for (let round = 0; round < 2; round++) {
      const dataDir = freshDataDir();
      dirs.push(dataDir);
      await holdFreshDatabase(join(dataDir, "paygate.db"), 2500);
      const results = await Promise.all(Array.from({ length: 6 }, () => runCli(["migrate", "--data", dataDir])));
      for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
      const applied = results.map((r) => r.stdout).join("\n");
      expect(applied.match(/001_init/g)?.length).toBe(1);
    }
  });
});
