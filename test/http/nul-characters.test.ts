/**
 * A NUL (U+0000) in a body string, a body key, a query value or a path parameter is
 * refused with 400 before any service runs. PostgreSQL's text cannot hold it: without
 * the refusal a sale or a refund reached the processor, then failed at the insert with
 * a 500 and left nothing recorded. Both engines give the same answer. Live mode against
 * the Stripe fake, which records every request it gets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { hiddenField, signedIn } from "../dashboard/support";
import { liveMerchant } from "../payments/live-account";
import { bootServer, type TestResponse, type TestServer } from "../support/harness";
import { auth } from "../support/seed";

let stripe: StripeFake;
let server: TestServer;
let shop: Awaited<ReturnType<typeof liveMerchant>>;
let paymentId: string;

beforeAll(async () => {
  stripe = await startStripeFake();
  server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
  shop = await liveMerchant(server, "stripe");
  const sale = await shop.client.sale({ amount: 2500, gateway_token: shop.token });
  expect(sale.status).toBe(201);
  paymentId = (await sale.json()).id;
});
afterAll(async () => {
  await server?.stop();
  await stripe?.close();
});

async function refusal(res: TestResponse) {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", message: expect.stringContaining("NUL") });
  return body.error as { param?: string };
}

describe("a NUL in a write's body", () => {
  it("refuses a sale whose description holds one with 400 naming description, and the processor is never called", async () => {
    const sent = stripe.requests.length;
    const res = await shop.client.sale({ amount: 2500, gateway_token: shop.token, description: "order note\u0000" }, { "idempotency-key": "nul-sale" });
    expect((await refusal(res)).param).toBe("description");
    expect(stripe.requests.length).toBe(sent);
    const list = await (await server.request("/v1/payments?limit=100", { headers: auth(shop.live.secret) })).json();
    expect(list.data.map((p: { id: string }) => p.id)).toEqual([paymentId]);
  });

  it("refuses a refund whose reason holds one with 400 naming reason: no processor refund, nothing refunded", async () => {
    const sent = stripe.requests.length;
    const res = await shop.client.refund({ payment_id: paymentId, amount: 2500, reason: "r\u0000" }, { "idempotency-key": "nul-refund" });
    expect((await refusal(res)).param).toBe("reason");
    expect(stripe.requests.length).toBe(sent);
    expect(stripe.refunds).toHaveLength(0);
    expect(await (await shop.client.get(paymentId)).json()).toMatchObject({ amount_refunded: 0, status: "succeeded" });
  });

  it("names the field inside nested objects and arrays, and the parent of a key that holds one", async () => {
    const post = (path: string, body: unknown) => shop.client.post(path, body as Record<string, unknown>);
    expect((await refusal(await post("/v1/payments/sale", { amount: 1, gateway_token: shop.token, metadata: { note: "a\u0000" } }))).param).toBe("metadata[note]");
    expect((await refusal(await post("/v1/webhook_endpoints", { url: "https://example.com/h", event_types: ["*", "x\u0000"] }))).param).toBe("event_types[1]");
    expect((await refusal(await post("/v1/payments/sale", { amount: 1, gateway_token: shop.token, metadata: { "k\u0000": "v" } }))).param).toBe("metadata");
    expect((await refusal(await post("/v1/api-keys", { "n\u0000": "x" }))).param).toBeUndefined();
  });
});

describe("a NUL in a path parameter or a query value", () => {
  it.each([
    ["GET", "/v1/payments/%00", "secret", "id"],
    ["GET", "/v1/payments?starting_after=%00", "secret", "starting_after"],
    ["GET", "/v1/events/%00", "secret", "id"],
    ["GET", "/v1/webhook_endpoints/%00", "secret", "id"],
    ["DELETE", "/v1/api-keys/%00", "secret", "keyId"],
    ["GET", "/admin/merchants/%00", "admin", "merchantId"],
  ] as const)("%s %s answers 400 naming the parameter, never a 500", async (method, path, key, param) => {
    const res = await server.request(path, { method, headers: auth(key === "admin" ? shop.live.admin : shop.live.secret) });
    expect((await refusal(res)).param).toBe(param);
  });
});

describe("a NUL in the dashboard", () => {
  it("refuses a query value and a form field with a 400 page, and the refund form never reaches the processor", async () => {
    const dash = await signedIn(server, shop.live.secret);
    const list = await dash.get("/dashboard/payments?connector_account=%00");
    expect(list.status).toBe(400);
    expect(await list.text()).toContain("NUL");

    const page = await (await dash.get(`/dashboard/payments/${paymentId}`)).text();
    const sent = stripe.requests.length;
    const refund = await dash.post(`/dashboard/payments/${paymentId}/refund`, {
      csrf: hiddenField(page, "csrf"),
      idempotency_key: hiddenField(page, "idempotency_key", "/refund"),
      amount: "1.00",
      reason: "r\u0000",
    });
    expect(refund.status).toBe(400);
    expect(await refund.text()).toContain("reason contains the NUL character");
    expect(stripe.requests.length).toBe(sent);
  });
});
