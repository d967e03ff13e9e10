import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";

// SQLite only: two servers on one data dir see each other's commits through
// `PRAGMA data_version` at once. On PostgreSQL the other instance hears a NOTIFY
// (test/multi-instance/shared-state.test.ts: within 1 s).
describe("a key revoked or rotated on one server, on another server of the same data dir", () => {
  let a: TestServer;
  let b: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    a = await bootServer();
    b = await bootServer({ dataDir: a.dataDir });
    m = await seedMerchant(a);
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  const newKey = async () => (await (await a.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "target" } })).json()) as { id: string; key: string };
  const listOnB = (key: string) => b.request("/v1/api-keys", { headers: auth(key) });

  it("fails with 401 on the first request after the revocation answered (CONTRACT §2: at once, on every process)", async () => {
    for (let round = 0; round < 5; round++) {
      const key = await newKey();
      expect((await listOnB(key.key)).status).toBe(200);
      const revoked = await a.request(`/v1/api-keys/${key.id}`, { method: "DELETE", headers: auth(m.secret) });
      expect(revoked.status).toBe(200);
      expect((await listOnB(key.key)).status).toBe(401);
    }
  });

  it("after a rotation the old value fails at once there and the new one works", async () => {
    const key = await newKey();
    expect((await listOnB(key.key)).status).toBe(200);
    const rotated = await a.request(`/v1/api-keys/${key.id}/rotate`, { method: "POST", headers: auth(m.secret) });
    expect(rotated.status).toBe(200);
    const fresh = (await rotated.json()).key as string;
    expect((await listOnB(key.key)).status).toBe(401);
    expect((await listOnB(fresh)).status).toBe(200);
  });
});
