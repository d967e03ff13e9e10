import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallContext } from "../../server/connectors/connector";
import { stripeConnector } from "../../server/connectors/stripe";
import { paymentIntentParams, readIntentAnswer, readRefundAnswer, stripeDeclineCode, toStripeAmount } from "../../server/connectors/stripe/wire";
import { TEST_CARDS, startFakeServer } from "../fakes/http-fake";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { approvedId, requestBuilders, storeInDoubt } from "./requests";
import { futureExpiry } from "../support/expiry";

const API_KEY = "sk_test_51FakeKeyForPaygateTests";
const SECRET = JSON.stringify({ api_key: API_KEY, webhook_secret: "whsec_fakeWebhookSecret" });

let fake: StripeFake;
const { charge, followOn } = requestBuilders("stripe");

let ledger: Awaited<ReturnType<typeof storeInDoubt>>;
beforeAll(async () => {
  ledger = await storeInDoubt("stripe");
  fake = await startStripeFake();
});
afterAll(async () => {
  await fake.close();
  await ledger.close();
});

function ctx(timeoutMs = 5_000, baseUrl = fake.baseUrl): CallContext {
  return { credential: stripeConnector.parseCredential(SECRET), baseUrl, timeoutMs, inDoubt: ledger.inDoubt };
}

describe("stripe connector against the fake", () => {
  it("authorizes with manual capture, then captures part of it", async () => {
    const req = charge();
    const intentId = approvedId(await stripeConnector.authorize(req, ctx()));

    const sent = fake.requests.at(-1);
    expect(sent?.path).toBe("/v1/payment_intents");
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.headers["idempotency-key"]).toBe(req.reference);
    expect(sent?.body).toMatchObject({
      amount: "1050",
      currency: "usd",
      capture_method: "manual",
      confirm: "true",
      "payment_method_data[type]": "card",
      "payment_method_data[card][number]": TEST_CARDS.approve,
      "payment_method_data[card][exp_month]": "4",
      "payment_method_data[card][exp_year]": String(futureExpiry().exp_year),
      "metadata[paygate_payment_id]": req.paymentId,
    });
    expect(fake.charges.find((intent) => intent.id === intentId)?.status).toBe("requires_capture");

    const captured = await stripeConnector.capture(followOn(intentId, 700), ctx());
    expect(captured).toEqual({ outcome: "approved", transactionId: intentId });
    expect(fake.requests.at(-1)?.path).toBe(`/v1/payment_intents/${intentId}/capture`);
    expect(fake.requests.at(-1)?.body).toEqual({ amount_to_capture: "700" });
    expect(fake.charges.find((intent) => intent.id === intentId)).toMatchObject({ status: "succeeded", amountReceived: 700 });
  });

  it("charges in one step when capture is requested", async () => {
    const intentId = approvedId(await stripeConnector.authorize(charge({ capture: true }), ctx()));
    expect(fake.requests.at(-1)?.body.capture_method).toBe("automatic");
    expect(fake.charges.find((intent) => intent.id === intentId)).toMatchObject({ status: "succeeded", amountReceived: 1050 });
  });

  it.each([
    ["generic_decline", TEST_CARDS.generic_decline],
    ["insufficient_funds", TEST_CARDS.insufficient_funds],
    ["expired_card", TEST_CARDS.expired_card],
    ["incorrect_cvc", TEST_CARDS.incorrect_cvc],
  ])("reports a %s decline", async (code, number) => {
    const result = await stripeConnector.authorize(charge({ card: { number, expMonth: 4, expYear: futureExpiry().exp_year } }), ctx());
    expect(result).toMatchObject({ outcome: "declined", code });
    expect(JSON.stringify(result)).not.toContain(number);
  });

  it("refunds part of a sale", async () => {
    const intentId = approvedId(await stripeConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const refund = followOn(intentId, 400);
    const result = await stripeConnector.refund(refund, ctx());
    expect(result).toMatchObject({ outcome: "approved" });
    expect(fake.requests.at(-1)?.body).toEqual({ payment_intent: intentId, amount: "400", "metadata[paygate_payment_id]": refund.paymentId });
    expect(fake.requests.at(-1)?.headers["idempotency-key"]).toBe(refund.reference);
    expect(fake.charges.find((intent) => intent.id === intentId)?.amountRefunded).toBe(400);
  });

  it("voids an authorization by cancelling the PaymentIntent", async () => {
    const intentId = approvedId(await stripeConnector.authorize(charge(), ctx()));
    expect(await stripeConnector.void(followOn(intentId, 1050), ctx())).toEqual({ outcome: "approved", transactionId: intentId });
    expect(fake.requests.at(-1)?.path).toBe(`/v1/payment_intents/${intentId}/cancel`);
    expect(fake.charges.find((intent) => intent.id === intentId)?.status).toBe("canceled");
  });

  it("times out, and a retry with the same reference gets the same charge back", async () => {
    const req = charge({ capture: true });
    fake.failNext("hang");
    expect(await stripeConnector.authorize(req, ctx(150))).toEqual({ outcome: "timeout" });

    const intentId = approvedId(await stripeConnector.authorize(req, ctx()));
    const made = fake.charges.filter((intent) => intent.metadata.paygate_payment_id === req.paymentId);
    expect(made).toHaveLength(1);
    expect(made[0]?.id).toBe(intentId);
  });

  it("maps a 500 and a malformed body to processor_error", async () => {
    fake.failNext("500");
    expect(await stripeConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
    fake.failNext("malformed");
    expect(await stripeConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("maps an unreachable host to processor_error", async () => {
    const closed = await startFakeServer({ handle: () => ({ status: 200, contentType: "text/plain", body: "" }), malformed: { status: 200, contentType: "text/plain", body: "" } });
    await closed.close();
    expect(await stripeConnector.authorize(charge(), ctx(5_000, closed.baseUrl))).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("maps a rejected API key to processor_error without echoing the key", async () => {
    const wrongKey = { ...ctx(), credential: { api_key: "pk_live_notASecretKey", webhook_secret: "whsec_x" } };
    const result = await stripeConnector.authorize(charge(), wrongKey);
    expect(result).toMatchObject({ outcome: "error", code: "processor_error" });
    expect(JSON.stringify(result)).not.toContain("pk_live_notASecretKey");
  });

  it("sends card data only when authorizing", async () => {
    const first = fake.requests.length;
    const authId = approvedId(await stripeConnector.authorize(charge(), ctx()));
    await stripeConnector.capture(followOn(authId, 1050), ctx());
    const saleId = approvedId(await stripeConnector.authorize(charge({ capture: true }), ctx()));
    await stripeConnector.refund(followOn(saleId, 100), ctx());
    const voidId = approvedId(await stripeConnector.authorize(charge(), ctx()));
    await stripeConnector.void(followOn(voidId, 1050), ctx());

    const made = fake.requests.slice(first);
    expect(made).toHaveLength(6);
    for (const request of made) {
      const carriesCard = request.raw.includes(TEST_CARDS.approve);
      expect(carriesCard).toBe(request.path === "/v1/payment_intents");
      expect(JSON.stringify(request.headers)).not.toContain(TEST_CARDS.approve);
    }
  });
});

describe("stripe credentials", () => {
  it("accepts the documented secret", () => {
    expect(stripeConnector.parseCredential(SECRET)).toEqual({ api_key: API_KEY, webhook_secret: "whsec_fakeWebhookSecret" });
  });

  it.each([
    ["not JSON", "sk_live_SECRETVALUE123"],
    ["a JSON string", JSON.stringify("sk_live_SECRETVALUE123")],
    ["a missing webhook secret", JSON.stringify({ api_key: "sk_live_SECRETVALUE123" })],
    ["a publishable key", JSON.stringify({ api_key: "pk_live_SECRETVALUE123", webhook_secret: "whsec_SECRETVALUE123" })],
    ["a bad webhook secret", JSON.stringify({ api_key: "sk_live_SECRETVALUE123", webhook_secret: "SECRETVALUE123" })],
  ])("rejects %s without quoting it", (_, raw) => {
    let message = "";
    try {
      stripeConnector.parseCredential(raw);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toBe("");
    expect(message).not.toContain("SECRETVALUE123");
  });
});

describe("stripe wire mapping", () => {
  it("sends paygate minor units, adjusting where Stripe's exponent differs", () => {
    expect(toStripeAmount(1050, "usd")).toBe(1050);
    expect(toStripeAmount(500, "jpy")).toBe(500);
    expect(toStripeAmount(12340, "kwd")).toBe(12340);
    // Stripe keeps isk two-decimal and makes mga zero-decimal.
    expect(toStripeAmount(500, "isk")).toBe(50000);
    expect(toStripeAmount(1000, "mga")).toBe(10);
    expect(toStripeAmount(1050, "mga")).toBeUndefined();
  });

  it("builds the PaymentIntent form", () => {
    const params = new Map(paymentIntentParams(charge({ capture: true, description: "order 7" }), 500));
    expect(params.get("amount")).toBe("500");
    expect(params.get("capture_method")).toBe("automatic");
    expect(params.get("payment_method_types[0]")).toBe("card");
    expect(params.get("description")).toBe("order 7");
  });

  it("maps Stripe decline codes, defaulting to generic_decline", () => {
    expect(stripeDeclineCode("insufficient_funds")).toBe("insufficient_funds");
    expect(stripeDeclineCode("do_not_honor")).toBe("do_not_honor");
    expect(stripeDeclineCode("lost_card")).toBe("lost_card");
    expect(stripeDeclineCode("incorrect_number")).toBe("invalid_card");
    expect(stripeDeclineCode("processing_error")).toBe("processing_error");
    expect(stripeDeclineCode("fraudulent")).toBe("generic_decline");
    expect(stripeDeclineCode(undefined)).toBe("generic_decline");
  });

  it("reads PaymentIntent answers", () => {
    const intent = (status: string) => JSON.stringify({ id: "pi_1", object: "payment_intent", status });
    expect(readIntentAnswer(200, intent("requires_capture"), "requires_capture")).toEqual({ outcome: "approved", transactionId: "pi_1" });
    expect(readIntentAnswer(200, intent("requires_action"), "succeeded")).toMatchObject({ outcome: "declined", code: "generic_decline" });
    expect(readIntentAnswer(200, intent("processing"), "succeeded")).toMatchObject({ outcome: "error", code: "processor_error" });
    expect(readIntentAnswer(200, "[]", "succeeded")).toMatchObject({ outcome: "error", code: "processor_error" });
    const declined = JSON.stringify({ error: { type: "card_error", code: "card_declined", decline_code: "stolen_card", message: "Card 4000000000009979 declined" } });
    expect(readIntentAnswer(402, declined, "succeeded")).toEqual({ outcome: "declined", code: "stolen_card", message: "Card [redacted] declined" });
    const invalid = JSON.stringify({ error: { type: "invalid_request_error", code: "parameter_missing", message: "Invalid API Key provided: sk_live_****1234" } });
    const result = readIntentAnswer(401, invalid, "succeeded");
    expect(result).toMatchObject({ outcome: "error", code: "processor_error" });
    expect(JSON.stringify(result)).not.toContain("sk_live");
  });

  it("reads Refund answers", () => {
    const refund = (status: string) => JSON.stringify({ id: "re_1", object: "refund", status });
    expect(readRefundAnswer(200, refund("pending"))).toEqual({ outcome: "approved", transactionId: "re_1" });
    expect(readRefundAnswer(200, refund("failed"))).toMatchObject({ outcome: "declined" });
  });
});
