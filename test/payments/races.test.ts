import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

describe("concurrent follow-ons", () => {
  let server: TestServer;
  let client: ReturnType<typeof paymentsClient>;
  let token: string;
  beforeAll(async () => {
    server = await bootServer();
    const shop = await seedSandboxMerchant(server);
    client = paymentsClient(server, shop.secret);
    token = await client.token();
  });
  afterAll(() => server.stop());

  const eventCount = async (paymentId: string, type: string) =>
    Number(
      (
        await server.app.db
          .selectFrom("events")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("payment_id", "=", paymentId)
          .where("type", "=", type)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("two captures racing on one payment: one 200, one 409, one event — 100 times", async () => {
    for (let round = 0; round < 100; round++) {
      const payment = await (await client.authorize({ amount: 1000, gateway_token: token, capture_method: "manual" })).json();
      const [a, b] = await Promise.all([client.capture({ payment_id: payment.id }), client.capture({ payment_id: payment.id })]);
      const statuses = [a.status, b.status].sort();
      expect(statuses, `round ${round}`).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect((await loser.json()).error.code).toBe("invalid_state_transition");
      expect(await eventCount(payment.id, "payment.captured")).toBe(1);
    }
  });

  it("concurrent partial refunds never refund more than was captured — 100 times", async () => {
    for (let round = 0; round < 100; round++) {
      const payment = await (await client.sale({ amount: 1000, gateway_token: token })).json();
      const results = await Promise.all([400, 400, 400].map((amount) => client.refund({ payment_id: payment.id, amount })));
      const ok = results.filter((r) => r.status === 200).length;
      expect(ok, `round ${round}`).toBe(2);
      for (const res of results.filter((r) => r.status !== 200)) {
        expect(res.status).toBe(400);
        expect((await res.json()).error.code).toBe("amount_too_large");
      }
      const final = await (await client.get(payment.id)).json();
      expect(final.amount_refunded).toBe(800);
      expect(final.refunds.reduce((sum: number, r: { amount: number }) => sum + r.amount, 0)).toBe(800);
      expect(await eventCount(payment.id, "payment.refunded")).toBe(2);
    }
  });
});
