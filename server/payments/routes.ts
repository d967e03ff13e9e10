import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { json, route, type Route, type RouteRequest } from "../http/route";
import { parse } from "../http/validate";
import { listParams } from "../pagination";
import { createPayment, type WriteContext } from "./create-payment";
import { followOn } from "./follow-on";
import type { Payment } from "./payment";
import { captureBody, newPaymentBody, refundBody, voidBody } from "./payment-input";
import { getPayment, listPayments } from "./retrieve";
import type { FollowOn } from "./state-machine";

const writeContext = (req: RouteRequest): WriteContext => ({
  unit: req.unit,
  idempotencyKey: req.idempotencyKey,
  headerSelector: req.headers.get("x-connector-account") ?? undefined,
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
      handle: (req) => createPayment(app, req.actor, parse(newPaymentBody, req.body), kind, writeContext(req)),
      present: presentNew,
    });
  const schemas = { capture: captureBody, refund: refundBody, void: voidBody };
  const followOnRoute = (operation: FollowOn) =>
    route({
      method: "POST",
      path: `/v1/payments/${operation}`,
      scope: "payments:write",
      handle: (req) => followOn(app, req.actor, operation, parse(schemas[operation], req.body), writeContext(req)),
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
      handle: (req) => getPayment(app.db, req.actor, req.params.id as string),
      present: (payment) => json(200, payment),
    }),
    route({
      method: "GET",
      path: "/v1/payments",
      scope: "payments:read",
      handle: (req) => listPayments(app.db, req.actor, listParams(req.query), req.query),
      present: (page) => json(200, page),
    }),
  ];
}
