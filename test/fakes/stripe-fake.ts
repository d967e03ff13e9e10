/**
 * A fake Stripe API for tests: real HTTP on 127.0.0.1, Stripe's wire format for the calls
 * paygate makes (https://docs.stripe.com/api).
 *
 *   const stripe = await startStripeFake();
 *   // point the stripe account's base URL at stripe.baseUrl; any sk_/rk_ key is accepted
 *   stripe.charges     // PaymentIntents that authorized, updated by capture/cancel/refund
 *   stripe.refunds     // Refunds created
 *   stripe.requests    // every request: method, path, headers, parsed form body, raw body
 *   stripe.failNext("hang", 1)   // see http-fake.ts for "500" | "malformed" | "hang"
 *   await stripe.close()
 *
 * Endpoints: POST /v1/payment_intents (confirm=true with payment_method_data[card]),
 * POST /v1/payment_intents/:id/capture (amount_to_capture), POST /v1/payment_intents/:id/cancel,
 * POST /v1/refunds (payment_intent, amount). Cards: see TEST_CARDS in http-fake.ts; declines
 * answer HTTP 402 card_error like Stripe's own test cards (card_declined + decline_code
 * generic_decline / insufficient_funds, code expired_card, code incorrect_cvc).
 * Idempotency-Key: the first answer per (API key, key) is stored, including for hung requests,
 * and replayed with `Idempotent-Replayed: true`; reuse with other parameters answers 400.
 */
import { declineClassOf, field, last4, startFakeServer, type DeclineClass, type FakeReply, type FakeServer, type RecordedRequest } from "./http-fake";

export interface StripeFakeIntent {
  id: string;
  amount: number;
  currency: string;
  captureMethod: "automatic" | "manual";
  status: "requires_capture" | "succeeded" | "canceled";
  amountReceived: number;
  amountRefunded: number;
  cardLast4: string;
  metadata: Record<string, string>;
}

export interface StripeFakeRefund {
  id: string;
  paymentIntent: string;
  amount: number;
}

export interface StripeFake extends FakeServer {
  charges: StripeFakeIntent[];
  refunds: StripeFakeRefund[];
}

const DECLINES: Record<DeclineClass, { code: string; decline_code?: string; message: string }> = {
  generic_decline: { code: "card_declined", decline_code: "generic_decline", message: "Your card was declined." },
  insufficient_funds: { code: "card_declined", decline_code: "insufficient_funds", message: "Your card has insufficient funds." },
  expired_card: { code: "expired_card", message: "Your card has expired." },
  incorrect_cvc: { code: "incorrect_cvc", message: "Your card's security code is incorrect." },
};

export async function startStripeFake(): Promise<StripeFake> {
  const charges: StripeFakeIntent[] = [];
  const refunds: StripeFakeRefund[] = [];
  const idempotency = new Map<string, { fingerprint: string; reply: FakeReply }>();
  let nextId = 1;

  function route(request: RecordedRequest): FakeReply {
    const { path, body } = request;
    if (request.method !== "POST") return error(404, "invalid_request_error", "resource_missing", "Unrecognized request URL.");
    if (path === "/v1/payment_intents") return createIntent(body);
    if (path === "/v1/refunds") return createRefund(body);
    const match = /^\/v1\/payment_intents\/([^/]+)\/(capture|cancel)$/.exec(path);
    const intent = match && charges.find((candidate) => candidate.id === decodeURIComponent(match[1] ?? ""));
    if (!match || !intent) return error(404, "invalid_request_error", "resource_missing", "No such payment_intent.");
    return match[2] === "capture" ? capture(intent, body) : cancel(intent);
  }

  function createIntent(body: Record<string, unknown>): FakeReply {
    const amount = Number(field(body, "amount"));
    const currency = field(body, "currency");
    const number = field(body, "payment_method_data[card][number]");
    if (!Number.isInteger(amount) || amount <= 0 || !currency) return error(400, "invalid_request_error", "parameter_invalid_integer", "Invalid amount or currency.");
    if (field(body, "payment_method_data[type]") !== "card" || !number || field(body, "confirm") !== "true") {
      return error(400, "invalid_request_error", "parameter_missing", "This fake only confirms card PaymentIntents.");
    }
    const id = `pi_fake${nextId++}`;
    const decline = declineClassOf(number);
    if (decline) {
      const { code, decline_code, message } = DECLINES[decline];
      const lastError = { type: "card_error", code, decline_code, message };
      const intent = { id, object: "payment_intent", amount, currency, status: "requires_payment_method", last_payment_error: lastError };
      return json(402, { error: { ...lastError, payment_intent: intent } });
    }
    const captureMethod = field(body, "capture_method") === "manual" ? "manual" : "automatic";
    const intent: StripeFakeIntent = {
      id,
      amount,
      currency,
      captureMethod,
      status: captureMethod === "manual" ? "requires_capture" : "succeeded",
      amountReceived: captureMethod === "manual" ? 0 : amount,
      amountRefunded: 0,
      cardLast4: last4(number),
      metadata: metadataOf(body),
    };
    charges.push(intent);
    return json(200, intentJson(intent));
  }

  function capture(intent: StripeFakeIntent, body: Record<string, unknown>): FakeReply {
    if (intent.status !== "requires_capture") return unexpectedState(intent);
    const amount = Number(field(body, "amount_to_capture") ?? intent.amount);
    if (!Number.isInteger(amount) || amount <= 0 || amount > intent.amount) return error(400, "invalid_request_error", "amount_too_large", "Amount to capture is too large.");
    intent.status = "succeeded";
    intent.amountReceived = amount;
    return json(200, intentJson(intent));
  }

  function cancel(intent: StripeFakeIntent): FakeReply {
    if (intent.status !== "requires_capture") return unexpectedState(intent);
    intent.status = "canceled";
    return json(200, intentJson(intent));
  }

  function createRefund(body: Record<string, unknown>): FakeReply {
    const intent = charges.find((candidate) => candidate.id === field(body, "payment_intent"));
    if (!intent) return error(404, "invalid_request_error", "resource_missing", "No such payment_intent.");
    if (intent.status !== "succeeded") return unexpectedState(intent);
    const remaining = intent.amountReceived - intent.amountRefunded;
    const amount = Number(field(body, "amount") ?? remaining);
    if (!Number.isInteger(amount) || amount <= 0 || amount > remaining) return error(400, "invalid_request_error", "amount_too_large", "Refund amount is greater than unrefunded amount.");
    intent.amountRefunded += amount;
    const refund = { id: `re_fake${nextId++}`, paymentIntent: intent.id, amount };
    refunds.push(refund);
    return json(200, { id: refund.id, object: "refund", amount, currency: intent.currency, payment_intent: intent.id, status: "succeeded" });
  }

  const fake = await startFakeServer({
    malformed: { status: 200, contentType: "application/json", body: '{"id": "pi_trunc' },
    handle(request) {
      const apiKey = /^Bearer ((?:sk|rk)_\S+)$/.exec(request.headers.authorization ?? "")?.[1];
      if (!apiKey) return error(401, "invalid_request_error", undefined, "Invalid API Key provided.");
      const key = request.headers["idempotency-key"];
      if (typeof key !== "string") return route(request);
      const scoped = `${apiKey}\n${key}`;
      const fingerprint = `${request.method} ${request.path} ${request.raw}`;
      const saved = idempotency.get(scoped);
      if (saved && saved.fingerprint !== fingerprint) {
        return error(400, "idempotency_error", undefined, "Keys for idempotent requests can only be used with the same parameters they were first used with.");
      }
      if (saved) return { ...saved.reply, headers: { ...saved.reply.headers, "Idempotent-Replayed": "true" } };
      const reply = route(request);
      idempotency.set(scoped, { fingerprint, reply });
      return reply;
    },
  });
  return { ...fake, charges, refunds };
}

function intentJson(intent: StripeFakeIntent): Record<string, unknown> {
  return {
    id: intent.id,
    object: "payment_intent",
    amount: intent.amount,
    amount_capturable: intent.status === "requires_capture" ? intent.amount : 0,
    amount_received: intent.amountReceived,
    capture_method: intent.captureMethod,
    currency: intent.currency,
    metadata: intent.metadata,
    status: intent.status,
  };
}

function metadataOf(body: Record<string, unknown>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    const key = /^metadata\[(.+)\]$/.exec(name)?.[1];
    if (key && typeof value === "string") metadata[key] = value;
  }
  return metadata;
}

function unexpectedState(intent: StripeFakeIntent): FakeReply {
  return error(400, "invalid_request_error", "payment_intent_unexpected_state", `This PaymentIntent's status is ${intent.status}.`);
}

function error(status: number, type: string, code: string | undefined, message: string): FakeReply {
  return json(status, { error: { type, code, message } });
}

function json(status: number, body: unknown): FakeReply {
  return { status, contentType: "application/json", body: JSON.stringify(body) };
}
