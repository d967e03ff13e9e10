import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { paymentsClient } from "../support/payments";

/** Live mode against the local Stripe fake: the processor hangs, the client retries. */
describe("connector timeouts", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let live: SeededMerchant;
  let client: ReturnType<typeof paymentsClient>;
  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: "300ms" } });
    live = await seedMerchant(server, "Live shop", "live");
    await putSecret(server.app, "live/stripe", JSON.stringify({ api_key: "sk_live_fake", webhook_secret: "whsec_fake" }));
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
});
