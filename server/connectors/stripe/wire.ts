/**
 * Stripe's wire format: form-encoded PaymentIntents and Refunds requests, JSON answers.
 * Sources: https://docs.stripe.com/api (payment_intents create/capture/cancel, refunds,
 * errors, idempotent_requests), https://docs.stripe.com/declines/codes,
 * https://docs.stripe.com/currencies, and juspay/hyperswitch
 * crates/hyperswitch_connectors/src/connectors/stripe/transformers.rs.
 */
import type { ChargeRequest, ConnectorCredential, ConnectorResult, FollowOnRequest } from "../connector";
import { currencyExponent } from "../../payments/currency";
import { asObject, parseJsonObject, processorError, scrubMessage, stringField, type FormParams } from "../http-call";

/** Pinned so answers keep the shape this file reads whatever the account's default version is. */
export const STRIPE_API_VERSION = "2022-11-15";

const SECRET_SHAPE = 'stripe secret must be a JSON object {"api_key":"sk_...","webhook_secret":"whsec_..."}';

export function parseStripeSecret(raw: string): ConnectorCredential {
  // parseJsonObject never quotes its input, which here is the secret.
  const object = parseJsonObject(raw);
  const apiKey = object && stringField(object, "api_key");
  const webhookSecret = object && stringField(object, "webhook_secret");
  if (apiKey === undefined || webhookSecret === undefined) throw new Error(SECRET_SHAPE);
  if (!/^(sk|rk)_(live|test)_\S+$/.test(apiKey)) throw new Error("stripe api_key must be a secret (sk_) or restricted (rk_) key");
  if (!/^whsec_\S+$/.test(webhookSecret)) throw new Error("stripe webhook_secret must start with whsec_");
  return { api_key: apiKey, webhook_secret: webhookSecret };
}

/** The webhook secret is for paygate's webhook receiver; API calls only need the key. */
export function stripeApiKey(credential: ConnectorCredential): string | undefined {
  return credential.api_key || undefined;
}

/**
 * Stripe's minor units follow ISO 4217 except where its currency page says otherwise: it
 * treats mga as zero-decimal, and keeps isk two-decimal ("an ISK amount of 100 represents
 * 1 króna") while paygate's currency table has isk zero-decimal and mga two-decimal.
 */
const STRIPE_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ["isk", 2],
  ["mga", 0],
]);

/** paygate minor units to Stripe's, or undefined when the amount has no exact Stripe form. */
export function toStripeAmount(amount: number, currency: string): number | undefined {
  const ours = currencyExponent(currency);
  const theirs = STRIPE_EXPONENTS.get(currency) ?? ours;
  if (theirs >= ours) return amount * 10 ** (theirs - ours);
  const divisor = 10 ** (ours - theirs);
  return amount % divisor === 0 ? amount / divisor : undefined;
}

export function paymentIntentParams(req: ChargeRequest, amount: number): FormParams {
  const params: Array<readonly [string, string]> = [
    ["amount", String(amount)],
    ["currency", req.currency],
    ["capture_method", req.capture ? "automatic" : "manual"],
    ["confirm", "true"],
    // Only cards: no redirect-based method can be picked, so no return_url is needed.
    ["payment_method_types[0]", "card"],
    ["payment_method_data[type]", "card"],
    ["payment_method_data[card][number]", req.card.number],
    ["payment_method_data[card][exp_month]", String(req.card.expMonth)],
    ["payment_method_data[card][exp_year]", String(req.card.expYear)],
    ["metadata[paygate_payment_id]", req.paymentId],
  ];
  if (req.description) params.push(["description", req.description]);
  return params;
}

export function captureParams(amount: number): FormParams {
  return [["amount_to_capture", String(amount)]];
}

export function refundParams(req: FollowOnRequest, amount: number): FormParams {
  return [
    ["payment_intent", req.transactionId],
    ["amount", String(amount)],
    ["metadata[paygate_payment_id]", req.paymentId],
  ];
}

/** Stripe `decline_code` (or `code` when there is none) to paygate's connector_code. */
const DECLINE_CODES: ReadonlyMap<string, string> = new Map([
  ["generic_decline", "generic_decline"],
  ["insufficient_funds", "insufficient_funds"],
  ["expired_card", "expired_card"],
  ["incorrect_cvc", "incorrect_cvc"],
  ["invalid_cvc", "incorrect_cvc"],
  ["do_not_honor", "do_not_honor"],
  ["lost_card", "lost_card"],
  ["stolen_card", "stolen_card"],
  ["card_not_supported", "card_not_supported"],
  ["incorrect_number", "invalid_card"],
  ["invalid_number", "invalid_card"],
  ["invalid_account", "invalid_card"],
  ["invalid_expiry_month", "invalid_card"],
  ["invalid_expiry_year", "invalid_card"],
  ["processing_error", "processing_error"],
]);

export function stripeDeclineCode(code: string | undefined): string {
  return (code && DECLINE_CODES.get(code)) ?? "generic_decline";
}

export type IntentStatus = "requires_capture" | "succeeded" | "canceled";

/** Reads a PaymentIntent answer; `expected` is the status that means the call did its job. */
export function readIntentAnswer(status: number, body: string, expected: IntentStatus): ConnectorResult {
  const json = parseJsonObject(body);
  if (!json) return processorError(`Stripe answered HTTP ${status} with a body that is not JSON`);
  if (status >= 300) return readError(status, json);
  const id = stringField(json, "id");
  if (json.object !== "payment_intent" || !id) return processorError("Stripe answered without a PaymentIntent");
  const intentStatus = stringField(json, "status");
  if (intentStatus === expected) return { outcome: "approved", transactionId: id };
  if (intentStatus === "requires_payment_method") {
    const lastError = asObject(json.last_payment_error);
    return declined(lastError ?? {});
  }
  if (intentStatus === "requires_action") {
    // paygate sends raw card data with no customer present to complete 3-D Secure.
    return { outcome: "declined", code: "generic_decline", message: "the card issuer requires 3-D Secure authentication" };
  }
  return processorError(`Stripe answered PaymentIntent status ${intentStatus ?? "(none)"} where ${expected} was expected`);
}

export function readRefundAnswer(status: number, body: string): ConnectorResult {
  const json = parseJsonObject(body);
  if (!json) return processorError(`Stripe answered HTTP ${status} with a body that is not JSON`);
  if (status >= 300) return readError(status, json);
  const id = stringField(json, "id");
  if (json.object !== "refund" || !id) return processorError("Stripe answered without a Refund");
  const refundStatus = stringField(json, "status");
  // A pending card refund completes without further calls; Stripe reports it by webhook.
  if (refundStatus === "succeeded" || refundStatus === "pending") return { outcome: "approved", transactionId: id };
  if (refundStatus === "failed" || refundStatus === "canceled") {
    const reason = stringField(json, "failure_reason");
    return { outcome: "declined", code: "generic_decline", message: `Stripe refund ${refundStatus}${reason ? `: ${reason}` : ""}` };
  }
  return processorError(`Stripe answered refund status ${refundStatus ?? "(none)"}`);
}

function readError(status: number, json: Record<string, unknown>): ConnectorResult {
  const error = asObject(json.error);
  if (!error) return processorError(`Stripe answered HTTP ${status} without an error object`);
  if (error.type === "card_error") return declined(error);
  // Built from type and code only: Stripe's text for a bad key quotes part of the key.
  const kind = [stringField(error, "type"), stringField(error, "code")].filter(Boolean).join("/");
  return processorError(`Stripe rejected the request: HTTP ${status} ${kind || "unknown error"}`);
}

function declined(error: Record<string, unknown>): ConnectorResult {
  const code = stringField(error, "decline_code") ?? stringField(error, "code");
  return { outcome: "declined", code: stripeDeclineCode(code), message: scrubMessage(stringField(error, "message") ?? "the card was declined") };
}
