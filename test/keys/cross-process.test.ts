import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { runCli } from "../support/cli";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { expectStored, storedData } from "../support/raw-files";

/** Polls until `check` holds, for at most `ms`; returns the time it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

describe("CLI and server on one data dir", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  const newKey = async () =>
    (await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "cli-target" } })).json()) as { id: string; key: string };
  const listWith = (key: string) => server.request("/v1/api-keys", { headers: auth(key) });

  it("a key rotated by the CLI stops working on the running server within 1 s", async () => {
    const key = await newKey();
    expect((await listWith(key.key)).status).toBe(200);
    const cli = await runCli(["keys", "rotate", key.id, "--merchant", m.merchant.short_id, "--data", server.dataDir, "--json"]);
    expect(cli.code).toBe(0);
    const rotated = JSON.parse(cli.stdout);
    expect(rotated.id).toBe(key.id);
    await within(1000, async () => (await listWith(key.key)).status === 401);
    expect((await listWith(rotated.key)).status).toBe(200);
  });

  it("a key revoked by the CLI stops working on the running server within 1 s", async () => {
    const key = await newKey();
    expect((await listWith(key.key)).status).toBe(200);
    const cli = await runCli(["keys", "revoke", key.id, "--merchant", m.merchant.id, "--data", server.dataDir]);
    expect(cli.code).toBe(0);
    await within(1000, async () => (await listWith(key.key)).status === 401);
  });

  it("the CLI, the operator with the database in hand, manages admin and live keys no API key may touch", async () => {
    const cli = (...args: string[]) => runCli([...args, "--merchant", m.merchant.short_id, "--data", server.dataDir, "--json"]);
    const created = await cli("keys", "create", "--name", "ops-live", "--mode", "live", "--admin");
    expect(created.code).toBe(0);
    const admin = JSON.parse(created.stdout);
    expect(admin).toMatchObject({ role: "admin", mode: "live", key: expect.stringMatching(/^sk_live_/) });
    const rotated = await cli("keys", "rotate", admin.id);
    expect(rotated.code).toBe(0);
    const fresh = JSON.parse(rotated.stdout).key as string;
    expect(fresh).toMatch(/^sk_live_/);
    expect((await listWith(fresh)).status).toBe(200);
    const listed = await cli("keys", "list");
    expect(new Set(JSON.parse(listed.stdout).data.map((k: { mode: string }) => k.mode))).toEqual(new Set(["test", "live"]));
    const revoked = await cli("keys", "revoke", admin.id);
    expect(revoked.code).toBe(0);
    await within(1000, async () => (await listWith(fresh)).status === 401);
  });

  it("keys made by the CLI work on the server, and the CLI lists what the server made", async () => {
    const cli = await runCli(["keys", "create", "--merchant", m.merchant.short_id, "--name", "from-cli", "--data", server.dataDir]);
    expect(cli.code).toBe(0);
    const plaintext = cli.stdout.trim();
    expect(plaintext).toMatch(/^sk_test_/);
    expect((await listWith(plaintext)).status).toBe(200);
    const listed = await runCli(["keys", "list", "--merchant", m.merchant.short_id, "--data", server.dataDir, "--json"]);
    const names = JSON.parse(listed.stdout).data.map((k: { name: string }) => k.name);
    expect(names).toContain("from-cli");
    expect(listed.stdout).not.toContain(plaintext);
  });

  it("never writes a key's plaintext to the database files or the log", async () => {
    const keys = [m.secret, m.publishable, m.admin, (await newKey()).key];
    for (const key of keys) await listWith(key);
    await server.app.auth.flushLastUsed();
    const contents = (await storedData(server.dataDir)) + server.readLog();
    expectStored(contents, m.secretId, ...keys.map((key) => key.slice(-4)));
    for (const key of keys) {
      expect(contents).not.toContain(key);
      expect(contents).not.toContain(key.slice(8));
    }
  });
});
