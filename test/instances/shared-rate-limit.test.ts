/**
 * The rate limit is the deployment's, not each instance's: serving processes announce
 * themselves in the database and each holds 1/N of the limit. The second instance is
 * announced straight into the database, as its heartbeat would.
 */
import { describe, expect, it } from "vitest";
import { announceInstance } from "../../store/instances";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant } from "../support/seed";

const instancesGauge = async (server: TestServer): Promise<number> => {
  const text = await (await server.request("/metrics")).text();
  return Number(/^paygate_instances (\d+)$/m.exec(text)?.[1]);
};

/** How many of `count` back-to-back requests pass before the first 429. */
async function passing(server: TestServer, key: string, count: number): Promise<number> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await server.request("/v1/api-keys", { headers: auth(key) })).status);
  expect(statuses.every((s) => s === 200 || s === 429), statuses.join(",")).toBe(true);
  return statuses.filter((s) => s === 200).length;
}

describe("the rate limit shared out among live instances", () => {
  it("a second live instance halves each one's burst; a lapsed one is counted out and deleted", { timeout: 30_000 }, async () => {
    // One token a second (half a token each): at most one refills during the requests.
    const server = await bootServer({ env: { PAYGATE_RATE_LIMIT: "1:10" } });
    try {
      const m = await seedMerchant(server);
      expect(await instancesGauge(server)).toBe(1);
      await announceInstance(server.app.db, "other-instance", Date.now() + 60_000);
      await announceInstance(server.app.db, "crashed-instance", Date.now() - 1);
      await expect.poll(() => instancesGauge(server), { timeout: 10_000, interval: 200 }).toBe(2);
      const passed = await passing(server, m.secret, 10);
      expect(passed).toBeGreaterThanOrEqual(5);
      expect(passed).toBeLessThanOrEqual(6);
      const left = await server.app.db.selectFrom("settings").select("name").where("name", "like", "instance:%").execute();
      expect(left.map((row) => row.name)).not.toContain("instance:crashed-instance");
      expect(left).toHaveLength(2);
    } finally {
      await server.stop();
    }
  });

  it("alone, an instance allows the whole burst", async () => {
    const server = await bootServer({ env: { PAYGATE_RATE_LIMIT: "1:10" } });
    try {
      const m = await seedMerchant(server);
      expect(await passing(server, m.secret, 12)).toBeGreaterThanOrEqual(10);
    } finally {
      await server.stop();
    }
  });
});
