import { describe, expect, it } from "vitest";
import { listMerchantAccounts } from "../../server/accounts/accounts";
import { getMerchant } from "../../server/merchants/merchants";
import { bootServer } from "../support/harness";
import { runCli } from "../support/cli";
import { freshDataDir } from "../support/harness";
import { auth, seedMerchant } from "../support/seed";

describe("rate limit", () => {
  it("answers 429 rate_limit_exceeded with Retry-After once a key's burst is spent", async () => {
    const server = await bootServer({ env: { PAYGATE_RATE_LIMIT: "2:5" } });
    try {
      const m = await seedMerchant(server);
      const statuses = [];
      let limited;
      for (let i = 0; i < 12; i++) {
        const res = await server.request("/v1/api-keys", { headers: auth(m.secret) });
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses).toContain(429);
      expect(limited?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
      expect((await limited?.json()).error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
      // Buckets are per key: another key is unaffected.
      expect((await server.request("/v1/api-keys", { headers: auth(m.admin) })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe("development mode", () => {
  it("acts as the seeded test merchant without any key", async () => {
    const server = await bootServer({ dev: true });
    try {
      const list = await server.request("/v1/api-keys");
      expect(list.status).toBe(200);
      const created = await server.request("/v1/api-keys", { method: "POST", headers: { "idempotency-key": "dev-1" }, json: { name: "dev" } });
      expect(created.status).toBe(201);
      expect((await created.json()).key).toMatch(/^sk_test_/);
      // The dev actor is no admin: the seeding is read through the services.
      const row = await server.app.db.selectFrom("merchants").select("id").where("name", "=", "Dev Merchant").executeTakeFirstOrThrow();
      const dev = await getMerchant(server.app.db, row.id);
      const accounts = await listMerchantAccounts(server.app.db, dev, false);
      expect(accounts).toEqual([
        expect.objectContaining({ connector_id: "mock", mode: "test", key_kind: "api_key", is_default: true, credential_ref: `secret://sandbox/${dev.short_id}/mock` }),
      ]);
    } finally {
      await server.stop();
    }
  });

  it("seeds once per data dir", async () => {
    const dataDir = freshDataDir();
    const first = await bootServer({ dev: true, dataDir });
    await first.close();
    const second = await bootServer({ dev: true, dataDir });
    try {
      const merchants = await second.app.db.selectFrom("merchants").select("id").where("name", "=", "Dev Merchant").execute();
      expect(merchants).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });

  it("refuses to start in production or off loopback, with exit 1", async () => {
    const production = await runCli(["serve", "--dev", "--port", "0", "--data", freshDataDir()], { env: { PAYGATE_ENV: "production" } });
    expect(production.code).toBe(1);
    expect(production.stderr).toMatch(/development mode refuses to run in production/);
    const nodeEnv = await runCli(["serve", "--port", "0", "--data", freshDataDir()], { env: { PAYGATE_DEV_MODE: "1", NODE_ENV: "production" } });
    expect(nodeEnv.code).toBe(1);
    const exposed = await runCli(["serve", "--dev", "--host", "0.0.0.0", "--port", "0", "--data", freshDataDir()]);
    expect(exposed.code).toBe(1);
    expect(exposed.stderr).toMatch(/loopback/);
  });
});
