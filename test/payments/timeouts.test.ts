import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { paymentsClient } from "../support/payments";
import { byOperator } from "../../server/audit/audit-actor";

/** Live mode against the local Stripe fake: the processor hangs, the client retries. */
describe("connector timeouts", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let live: SeededMerchant;
  let client: ReturnType<typeof paymentsClient>;
  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: "1s" } });
    live = await seedMerchant(server, "Live shop", "live");
    await putSecret(server.app, "live/stripe", JSON.stringify({ api_key: "sk_live_fake", webhook_secret: "whsec_fake" }), byOperator());
    const created = await server.request(`/admin/merchants/${live.merchant.id}/connector-accounts`, {
      method: "POST",
      headers: auth(live.admin),
      json: { connector_id: "stripe", mode: "live", key_kind: "api_key", label: "main", is_default: true, credential_ref: "secret://live/stripe" },
    });
    expect(created.status).toBe(201);
    client = paymentsClient(server, live.secret);
  });
  afterAll(async () => {
    await server.stop();
    await stripe.close();
  });

  it("answers 504 connector_timeout, stores nothing, and a retry with the same key charges once", async () => {
    const token = await client.token("5555555555554444");
    expect(token).toMatch(/^tok_live_/);
    stripe.failNext("hang", 1);
    const first = await client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "retry-after-timeout" });
    expect(first.status).toBe(504);
    expect((await first.json()).error).toMatchObject({ type: "timeout_error", code: "connector_timeout" });
    const listed = await (await client.list()).json();
    expect(listed.data).toEqual([]);

    const retry = await client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "retry-after-timeout" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    const payment = await retry.json();
    expect(payment).toMatchObject({ status: "succeeded", connector_id: "stripe", test_mode: false, amount_captured: 4200 });
    expect(stripe.charges).toHaveLength(1);
    expect(payment.connector_transaction_id).toBe(stripe.charges[0]?.id);
    const replay = await client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "retry-after-timeout" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(stripe.charges).toHaveLength(1);
  });

  it("after a timeout, binds the key to its parameters: another amount is 422 and never reaches the processor", async () => {
    const token = await client.token("5555555555554444");
    stripe.failNext("hang", 1);
    const first = await client.sale({ amount: 100, gateway_token: token }, { "idempotency-key": "timeout-then-other-amount" });
    expect(first.status).toBe(504);
    const sent = stripe.requests.length;
    const other = await client.sale({ amount: 500000, gateway_token: token }, { "idempotency-key": "timeout-then-other-amount" });
    expect(other.status).toBe(422);
    expect((await other.json()).error.code).toBe("idempotency_param_mismatch");
    expect(stripe.requests.length).toBe(sent);
    const same = await client.sale({ amount: 100, gateway_token: token }, { "idempotency-key": "timeout-then-other-amount" });
    expect(same.status).toBe(201);
    expect(await same.json()).toMatchObject({ amount: 100, status: "succeeded" });
  });
  it("keeps a follow-on whose answer was lost in doubt: other follow-ons wait, its own retry settles it", async () => {
    const token = await client.token("5555555555554444");
    const sold = await (await client.sale({ amount: 1000, gateway_token: token })).json();
    stripe.failNext("hang", 1);
    const lost = await client.refund({ payment_id: sold.id, amount: 700 }, { "idempotency-key": "lost-refund" });
    expect(lost.status).toBe(504);

    // Another refund must not run while 700 may already be refunded: 700 + 400 > 1000.
    const other = await client.refund({ payment_id: sold.id, amount: 400 }, { "idempotency-key": "other-refund" });
    expect(other.status).toBe(409);
    expect(other.headers.get("retry-after")).not.toBeNull();
    expect((await other.json()).error).toMatchObject({ code: "conflict", payment_id: sold.id });
    expect(stripe.refunds.filter((refund) => refund.paymentIntent === sold.connector_transaction_id)).toHaveLength(1);

    const retried = await client.refund({ payment_id: sold.id, amount: 700 }, { "idempotency-key": "lost-refund" });
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ status: "partially_refunded", amount_refunded: 700 });

    // The 409 was not kept: the same key now gets the real answer, the amount check.
    const again = await client.refund({ payment_id: sold.id, amount: 400 }, { "idempotency-key": "other-refund" });
    expect(again.status).toBe(400);
    expect((await again.json()).error.code).toBe("amount_too_large");
    expect(stripe.refunds.filter((refund) => refund.paymentIntent === sold.connector_transaction_id)).toEqual([expect.objectContaining({ amount: 700 })]);
  });
});
