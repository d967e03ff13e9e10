/**
 * Stripe through PaymentIntents created and confirmed in one call with raw card data.
 * Every POST carries our `reference` as Stripe's Idempotency-Key: Stripe stores the first
 * answer per key and replays it, so re-sending after a timeout never charges twice.
 */
import type { CallContext, Connector, ConnectorResult } from "../connector";
import { deadline, formBody, httpCall, joinUrl, processorError, type FormParams } from "../http-call";
import {
  STRIPE_API_VERSION,
  captureParams,
  parseStripeSecret,
  paymentIntentParams,
  readIntentAnswer,
  readRefundAnswer,
  refundParams,
  stripeApiKey,
  toStripeAmount,
} from "./wire";

type Answer = (status: number, body: string) => ConnectorResult;

async function post(ctx: CallContext, path: string, params: FormParams, reference: string, read: Answer): Promise<ConnectorResult> {
  const apiKey = stripeApiKey(ctx.credential);
  if (!apiKey) return processorError("stripe credential has no api_key");
  const outcome = await httpCall(
    "Stripe",
    {
      url: joinUrl(ctx.baseUrl, path),
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Content-Type": "application/x-www-form-urlencoded",
        "Idempotency-Key": reference,
        "Stripe-Version": STRIPE_API_VERSION,
      },
      body: formBody(params),
    },
    deadline(ctx.timeoutMs),
  );
  return outcome.ok ? read(outcome.status, outcome.body) : outcome.result;
}

function unrepresentable(amount: number, currency: string): ConnectorResult {
  return processorError(`${amount} ${currency} minor units have no exact Stripe amount`);
}

export const stripeConnector: Connector = {
  id: "stripe",
  keyKinds: ["api_key"],
  liveCapable: true,
  defaultBaseUrl: "https://api.stripe.com",
  parseCredential: parseStripeSecret,

  async authorize(req, ctx) {
    const amount = toStripeAmount(req.amount, req.currency);
    if (amount === undefined) return unrepresentable(req.amount, req.currency);
    const expected = req.capture ? "succeeded" : "requires_capture";
    return post(ctx, "/v1/payment_intents", paymentIntentParams(req, amount), req.reference, (status, body) =>
      readIntentAnswer(status, body, expected),
    );
  },

  async capture(req, ctx) {
    const amount = toStripeAmount(req.amount, req.currency);
    if (amount === undefined) return unrepresentable(req.amount, req.currency);
    const path = `/v1/payment_intents/${encodeURIComponent(req.transactionId)}/capture`;
    return post(ctx, path, captureParams(amount), req.reference, (status, body) => readIntentAnswer(status, body, "succeeded"));
  },

  async refund(req, ctx) {
    const amount = toStripeAmount(req.amount, req.currency);
    if (amount === undefined) return unrepresentable(req.amount, req.currency);
    return post(ctx, "/v1/refunds", refundParams(req, amount), req.reference, readRefundAnswer);
  },

  async void(req, ctx) {
    const path = `/v1/payment_intents/${encodeURIComponent(req.transactionId)}/cancel`;
    return post(ctx, path, [], req.reference, (status, body) => readIntentAnswer(status, body, "canceled"));
  },
};
