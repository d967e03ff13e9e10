import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

describe("paygate backup / restore", () => {
  let server: TestServer;
  let restored: TestServer | undefined;
  let work: string;
  let key: string;
  const acknowledged: string[] = [];
  let ackedBeforeBackup: string[] = [];
  let backup: Awaited<ReturnType<typeof runCli>>;
  const file = () => join(work, "paygate-backup.db");

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "paygate-backup-"));
    server = await bootServer();
    const shop = await seedSandboxMerchant(server);
    key = shop.secret;
    const client = paymentsClient(server, key);
    const token = await client.token();
    let writing = true;
    const load = (async () => {
      while (writing) {
        const res = await client.sale({ amount: 1000 + acknowledged.length, gateway_token: token });
        const body = await res.json();
        if (!res.ok) throw new Error(`sale failed: ${res.status} ${JSON.stringify(body)}`);
        acknowledged.push(body.id);
      }
    })();
    const failed = load.then(() => Promise.reject(new Error("the sales loop stopped")));
    while (acknowledged.length < 20) await Promise.race([new Promise((r) => setTimeout(r, 20)), failed]);
    ackedBeforeBackup = [...acknowledged];
    backup = await runCli(["backup", "--to", file(), "--data", server.dataDir]);
    const ackedDuringBackup = acknowledged.length - ackedBeforeBackup.length;
    writing = false;
    await load;
    expect(ackedDuringBackup, "the server kept taking sales while the backup ran").toBeGreaterThan(0);
  }, 60_000);
  afterAll(async () => {
    await restored?.stop();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("writes a verified 0600 copy while the server takes sales, and says the master key is not in it", () => {
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/integrity ok/);
    expect(backup.stdout).toMatch(/master key is NOT in the backup/);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file()}-wal`)).toBe(false);
  });

  it("restores into a new data dir where every payment acknowledged before the backup is there", async () => {
    const target = freshDataDir();
    const result = await runCli(["restore", "--from", file(), "--data", target]);
    expect(result.code, result.stderr).toBe(0);
    const sqlite = new BetterSqlite3(join(target, "paygate.db"), { readonly: true });
    expect(sqlite.pragma("integrity_check", { simple: true })).toBe("ok");
    sqlite.close();
    restored = await bootServer({ dataDir: target });
    for (const id of ackedBeforeBackup) {
      const res = await restored.request(`/v1/payments/${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, id).toBe(200);
    }
  });

  it("restored without its master key, refuses to start and leaves no new, wrong master.key behind", async () => {
    const target = freshDataDir();
    expect((await runCli(["restore", "--from", file(), "--data", target])).code).toBe(0);
    const started = await runCli(["serve", "--port", "0", "--data", target], { env: { PAYGATE_MASTER_KEY: "" } });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(join(target, "master.key"));
    expect(existsSync(join(target, "master.key"))).toBe(false);
    rmSync(target, { recursive: true, force: true });
  });

  it("refuses to replace an existing database without --force, and while a server has it open even with --force", async () => {
    if (!restored) throw new Error("needs the restored server");
    const without = await runCli(["restore", "--from", file(), "--data", restored.dataDir]);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/already exists.*--force/);
    const running = await runCli(["restore", "--from", file(), "--data", restored.dataDir, "--force"]);
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/open in another process/);
  });

  it("refuses a backup that is not a sound paygate database, leaving the target as it was", async () => {
    const target = freshDataDir();
    const bogus = join(work, "bogus.db");
    writeFileSync(bogus, "not a database at all, just text that is long enough to have a header".repeat(20));
    const result = await runCli(["restore", "--from", bogus, "--data", target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(bogus);
    expect(existsSync(join(target, "paygate.db"))).toBe(false);
    rmSync(target, { recursive: true, force: true });
  });
});
