/**
 * NMI through the Direct Post API. NMI has no idempotency key, so before a sale, auth or
 * refund is sent the Query API is asked for a successful one under our reference (sent as
 * `orderid`; a refund's is bound to its payment, see `refundOrderId`); if the earlier attempt went through and only its answer was lost, that
 * transaction is returned instead of charging again. A look-up that fails or times out stops
 * the call: sending without knowing could charge twice.
 *
 * Capture and void cannot charge twice, so they are sent without a look-up. But when a
 * capture's or void's answer was lost, the retry is refused (the authorization is no longer
 * pending); before passing that refusal on, the Query API is asked for the transaction by its
 * id, and a successful capture (for our amount) or void already on it is the answer.
 */
import type { CallContext, Connector, ConnectorResult, FollowOnRequest } from "../connector";
import { deadline, formBody, httpCall, joinUrl, processorError, type FormParams, type HttpOutcome } from "../http-call";
import {
  QUERY_PATH,
  TRANSACT_PATH,
  captureParams,
  chargeParams,
  findEarlierAttempt,
  findEarlierFollowOn,
  nmiSecurityKey,
  parseNmiSecret,
  queryParams,
  readTransactAnswer,
  refundOrderId,
  refundParams,
  transactionQueryParams,
  voidParams,
} from "./wire";

function post(ctx: CallContext, path: string, params: FormParams, signal: AbortSignal): Promise<HttpOutcome> {
  return httpCall(
    "NMI",
    {
      url: joinUrl(ctx.baseUrl, path),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: formBody(params),
    },
    signal,
  );
}

async function transact(ctx: CallContext, params: FormParams, signal: AbortSignal): Promise<ConnectorResult> {
  const answer = await post(ctx, TRANSACT_PATH, params, signal);
  return answer.ok ? readTransactAnswer(answer.status, answer.body) : answer.result;
}

interface Guarded {
  reference: string;
  amount: number;
  currency: string;
  actionTypes: readonly string[];
  params: FormParams;
}

/** Look up by reference first; send only when NMI has no successful attempt under it. */
async function transactOnce(ctx: CallContext, securityKey: string, call: Guarded): Promise<ConnectorResult> {
  const signal = deadline(ctx.timeoutMs);
  const query = await post(ctx, QUERY_PATH, queryParams(call.reference, securityKey), signal);
  if (!query.ok) return query.result;
  const earlier = findEarlierAttempt(query.status, query.body, call.reference, call.actionTypes, call.amount, call.currency);
  if (earlier.kind !== "none") return earlier.result;
  return transact(ctx, call.params, signal);
}

/**
 * Sends a capture or void; when NMI refuses it, looks for the same action already made on the
 * transaction (a retry after a lost answer) and answers that instead of the refusal.
 */
async function followOnOnce(
  ctx: CallContext,
  securityKey: string,
  req: FollowOnRequest,
  actionType: "capture" | "void",
  params: FormParams,
): Promise<ConnectorResult> {
  const signal = deadline(ctx.timeoutMs);
  const result = await transact(ctx, params, signal);
  if (result.outcome === "approved" || result.outcome === "timeout") return result;
  const query = await post(ctx, QUERY_PATH, transactionQueryParams(req.transactionId, securityKey), signal);
  if (!query.ok) return result;
  const amount = actionType === "capture" ? req.amount : undefined;
  const earlier = findEarlierFollowOn(query.status, query.body, req.transactionId, actionType, amount, req.currency);
  return earlier.kind === "found" && earlier.result.outcome === "approved" ? earlier.result : result;
}

function withKey(ctx: CallContext, call: (securityKey: string) => Promise<ConnectorResult>): Promise<ConnectorResult> {
  const securityKey = nmiSecurityKey(ctx.credential);
  return securityKey ? call(securityKey) : Promise.resolve(processorError("nmi credential has no security_key"));
}

export const nmiConnector: Connector = {
  id: "nmi",
  keyKinds: ["security_key"],
  liveCapable: true,
  defaultBaseUrl: "https://secure.nmi.com",
  parseCredential: parseNmiSecret,

  authorize(req, ctx) {
    return withKey(ctx, (securityKey) =>
      transactOnce(ctx, securityKey, {
        reference: req.reference,
        amount: req.amount,
        currency: req.currency,
        // An earlier auth must not pass for a sale: it was never captured.
        actionTypes: [req.capture ? "sale" : "auth"],
        params: chargeParams(req, securityKey),
      }),
    );
  },

  // Capture and void act on an existing transactionid and cannot start a new charge.
  capture(req, ctx) {
    return withKey(ctx, (securityKey) => followOnOnce(ctx, securityKey, req, "capture", captureParams(req, securityKey)));
  },

  refund(req, ctx) {
    return withKey(ctx, (securityKey) =>
      transactOnce(ctx, securityKey, {
        reference: refundOrderId(req),
        amount: req.amount,
        currency: req.currency,
        actionTypes: ["refund"],
        params: refundParams(req, securityKey),
      }),
    );
  },

  void(req, ctx) {
    return withKey(ctx, (securityKey) => followOnOnce(ctx, securityKey, req, "void", voidParams(req, securityKey)));
  },
};
