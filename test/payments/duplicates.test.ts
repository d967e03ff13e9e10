/**
 * A reused Idempotency-Key never reaches the processor a second time: not through
 * another spelling of the path, not after its record expired. Live mode against the
 * Stripe fake, which records every request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeExpiredIdempotencyKeys } from "../../store/idempotency";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { bootServer, type TestServer } from "../support/harness";
import { liveMerchant } from "./live-account";

describe("a reused Idempotency-Key on a new payment", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof liveMerchant>>;
  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
    shop = await liveMerchant(server, "stripe");
  });
  afterAll(async () => {
    await server.stop();
    await stripe.close();
  });

  it("with a trailing slash shares the key's scope: replayed, not charged again", async () => {
    const first = await shop.client.sale({ amount: 2500, gateway_token: shop.token }, { "idempotency-key": "slash-key" });
    expect(first.status).toBe(201);
    const sent = stripe.requests.length;

    const again = await shop.client.post("/v1/payments/sale/", { currency: "usd", amount: 2500, gateway_token: shop.token }, { "idempotency-key": "slash-key" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await again.json()).id).toBe((await first.json()).id);
    expect(stripe.requests.length).toBe(sent);
  });

  it("after its record expired answers 409 idempotency_key_reused without asking the processor", async () => {
    const first = await shop.client.sale({ amount: 2600, gateway_token: shop.token }, { "idempotency-key": "expiring-key" });
    expect(first.status).toBe(201);
    await server.app.db.updateTable("idempotency_keys").set({ expires_at: 0 }).where("key", "=", "expiring-key").execute();
    expect(await purgeExpiredIdempotencyKeys(server.app.db, Date.now())).toBe(1);
    const sent = stripe.requests.length;

    const reused = await shop.client.sale({ amount: 2600, gateway_token: shop.token }, { "idempotency-key": "expiring-key" });
    expect(reused.status).toBe(409);
    expect((await reused.json()).error.code).toBe("idempotency_key_reused");
    expect(stripe.requests.length).toBe(sent);
  });

  it("after its record expired, a stray request with other parameters does not turn the original's answer into a mismatch", async () => {
    const first = await shop.client.sale({ amount: 2650, gateway_token: shop.token }, { "idempotency-key": "stray-key" });
    expect(first.status).toBe(201);
    await server.app.db.updateTable("idempotency_keys").set({ expires_at: 0 }).where("key", "=", "stray-key").execute();
    await purgeExpiredIdempotencyKeys(server.app.db, Date.now());

    const stray = await shop.client.sale({ amount: 9999, gateway_token: shop.token }, { "idempotency-key": "stray-key" });
    expect(stray.status).toBe(409);
    expect((await stray.json()).error.code).toBe("idempotency_key_reused");
    const original = await shop.client.sale({ amount: 2650, gateway_token: shop.token }, { "idempotency-key": "stray-key" });
    expect(original.status).toBe(409);
    expect((await original.json()).error.code).toBe("idempotency_key_reused");
  });

  it("on a refund, after its record expired, answers 409 idempotency_key_reused: the refund is not paid twice", async () => {
    const sale = await (await shop.client.sale({ amount: 1000, gateway_token: shop.token })).json();
    const refund = () => shop.client.refund({ payment_id: sale.id, amount: 100 }, { "idempotency-key": "expiring-refund" });
    expect((await refund()).status).toBe(200);
    await server.app.db.updateTable("idempotency_keys").set({ expires_at: 0 }).where("key", "=", "expiring-refund").execute();
    expect(await purgeExpiredIdempotencyKeys(server.app.db, Date.now())).toBe(1);
    const sent = stripe.requests.length;

    const reused = await refund();
    expect(reused.status).toBe(409);
    expect((await reused.json()).error).toMatchObject({ code: "idempotency_key_reused", param: "payment_id" });
    expect(stripe.requests.length).toBe(sent);
    const after = await (await shop.client.get(sale.id)).json();
    expect(after).toMatchObject({ amount_refunded: 100, status: "partially_refunded" });
    expect(after.refunds).toHaveLength(1);
  });

  it("gives a follow-on a processor reference of its own payment: a key reused after expiry on another payment is a new request", async () => {
    const refs: unknown[] = [];
    for (const amount of [700, 800]) {
      const sale = await (await shop.client.sale({ amount, gateway_token: shop.token })).json();
      const sent = stripe.requests.length;
      const refund = await shop.client.refund({ payment_id: sale.id, amount: 50 }, { "idempotency-key": "one-refund-key" });
      expect(refund.status).toBe(200);
      expect(refund.headers.get("idempotent-replayed")).toBeNull();
      refs.push(stripe.requests.slice(sent).map((r) => r.headers["idempotency-key"]));
      await server.app.db.updateTable("idempotency_keys").set({ expires_at: 0 }).where("key", "=", "one-refund-key").execute();
      await purgeExpiredIdempotencyKeys(server.app.db, Date.now());
    }
    expect((refs[0] as unknown[]).length).toBeGreaterThan(0);
    expect(refs[0]).not.toEqual(refs[1]);
  });
});
