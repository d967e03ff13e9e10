import { z } from "zod";
import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { json, route, type ErrorCodes, type Route, type RouteRequest } from "../http/route";
import { listOf, listParams, listQuery } from "../pagination";
import { createPayment, type WriteContext } from "./create-payment";
import { followOn } from "./follow-on";
import { paymentSchema, type Payment } from "./payment";
import { captureBody, newPaymentBody, refundBody, voidBody } from "./payment-input";
import { getPayment, listFilter, listPayments } from "./retrieve";
import type { FollowOn } from "./state-machine";

const writeContext = (req: RouteRequest): WriteContext => ({
  unit: req.unit,
  idempotencyKey: req.idempotencyKey,
  headerSelector: req.headers.get("x-connector-account") ?? undefined,
});

/** What choosing the connector account (CONTRACT §6) and calling the processor can answer. */
const ACCOUNT_AND_PROCESSOR: ErrorCodes = {
  400: ["connector_account_required", "connector_account_ambiguous", "invalid_connector_account", "connector_account_override_forbidden"],
  404: ["connector_account_not_found"],
  409: ["conflict", "connector_account_inactive", "connector_account_mode_mismatch", "connector_account_mismatch"],
  502: ["connector_error"],
  504: ["connector_timeout"],
};

/** The account selector header (CONTRACT §6), read by `writeContext`. */
const accountHeader = z.object({
  "X-Connector-Account": z.string().optional().meta({ description: "Selects the connector account (`ca_` short id or UUID); must agree with the connector_account field." }),
});

/** A declined new payment is answered with the spec's 502 envelope, plus its id. */
function presentNew(payment: Payment) {
  if (payment.status === "failed") {
    return new ApiError(502, "connector_error", payment.failure_message ?? "The card was declined.", {
      connector_code: payment.failure_code ?? "generic_decline",
      payment_id: payment.id,
    });
  }
  return json(201, payment);
}

/** `/v1/payments…`: authorize, sale, capture, refund, void, retrieve and list. */
export function paymentRoutes(app: AppContext): Route[] {
  const creation = (kind: "authorize" | "sale") =>
    route({
      method: "POST",
      path: `/v1/payments/${kind}`,
      scope: "payments:write",
      resetWithTestData: true,
      summary: kind === "sale" ? "Authorize and capture a card token in one step" : "Authorize a card token (capture later)",
      body: newPaymentBody,
      headers: accountHeader,
      responses: { 201: paymentSchema },
      errors: { ...ACCOUNT_AND_PROCESSOR, 404: ["token_not_found", "connector_account_not_found"], 409: [...(ACCOUNT_AND_PROCESSOR[409] ?? []), "idempotency_key_reused"] },
      handle: (req) => createPayment(app, req.actor, req.body, kind, writeContext(req)),
      present: presentNew,
    });
  const schemas = { capture: captureBody, refund: refundBody, void: voidBody };
  const followOnRoute = (operation: FollowOn) =>
    route({
      method: "POST",
      path: `/v1/payments/${operation}`,
      scope: "payments:write",
      resetWithTestData: true,
      summary: `${operation[0]?.toUpperCase()}${operation.slice(1)} a payment`,
      body: schemas[operation],
      headers: accountHeader,
      responses: { 200: paymentSchema },
      errors: {
        ...ACCOUNT_AND_PROCESSOR,
        400: [...(ACCOUNT_AND_PROCESSOR[400] ?? []), "amount_too_large"],
        404: ["payment_intent_not_found"],
        // A refund's Idempotency-Key reused after its record expired (follow-on.ts).
        409: [...(ACCOUNT_AND_PROCESSOR[409] ?? []), "invalid_state_transition", ...(operation === "refund" ? ["idempotency_key_reused"] : [])],
      },
      handle: (req) => followOn(app, req.actor, operation, req.body, writeContext(req)),
      present: (payment) => json(200, payment),
    });
  return [
    creation("authorize"),
    creation("sale"),
    followOnRoute("capture"),
    followOnRoute("refund"),
    followOnRoute("void"),
    route({
      method: "GET",
      path: "/v1/payments/:id",
      scope: "payments:read",
      summary: "Retrieve a payment",
      responses: { 200: paymentSchema },
      errors: { 404: ["payment_intent_not_found"] },
      handle: (req) => getPayment(app.db, req.actor, req.params.id as string),
      present: (payment) => json(200, payment),
    }),
    route({
      method: "GET",
      path: "/v1/payments",
      scope: "payments:read",
      summary: "List payments, newest first",
      query: listQuery.extend(listFilter.shape),
      responses: { 200: listOf(paymentSchema) },
      errors: { 404: ["payment_intent_not_found"] },
      handle: (req) => listPayments(app.db, req.actor, listParams(req.query), req.query),
      present: (page) => json(200, page),
    }),
  ];
}
