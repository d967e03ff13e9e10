import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

/** How many units the server committed so far (its group-commit metric; one per unit on PostgreSQL). */
async function committedUnits(server: TestServer): Promise<number> {
  const text = await (await server.request("/metrics")).text();
  return Number(/^paygate_group_commit_batch_size_sum (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

describe("an idempotent replay", () => {
  let server: TestServer;
  let client: ReturnType<typeof paymentsClient>;
  beforeAll(async () => {
    server = await bootServer();
    client = paymentsClient(server, (await seedSandboxMerchant(server)).secret);
  });
  afterAll(() => server.stop());

  it("answers the stored answer and a parameter mismatch from a read, committing nothing", async () => {
    const token = await client.token();
    const first = await client.sale({ amount: 1500, gateway_token: token }, { "idempotency-key": "read-only" });
    expect(first.status).toBe(201);
    const firstBody = await first.text();

    const before = await committedUnits(server);
    for (let i = 0; i < 20; i++) {
      const replay = await client.sale({ amount: 1500, gateway_token: token }, { "idempotency-key": "read-only" });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.text()).toBe(firstBody);
      const mismatch = await client.sale({ amount: 1600, gateway_token: token }, { "idempotency-key": "read-only" });
      expect((await mismatch.json()).error.code).toBe("idempotency_param_mismatch");
    }
    // 40 answers; a background job (last_used_at) may commit meanwhile, but not one unit per request.
    expect(await committedUnits(server)).toBeLessThan(before + 5);
  });
});
