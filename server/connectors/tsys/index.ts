/**
 * TSYS TransIT. TransIT has no idempotency key and no documented look-up by our
 * reference (SearchTransaction needs the transactionID, which a lost answer never gave us).
 * So an Auth, Sale or Return reference is recorded in the database before it is sent and
 * cleared once TransIT answers; one left unanswered (a timeout, a dropped connection, a
 * crash) stays "in doubt", and a retry with it answers `timeout` again instead of
 * re-sending: the outcome stays unknown until someone reconciles it in TransIT
 * (orderNumber = reference), but the card is never charged or refunded twice, by any
 * process, across restarts.
 */
import type { CallContext, Connector, ConnectorResult } from "../connector";
import { TIMEOUT, deadline, httpCall, joinUrl, processorError } from "../http-call";
import {
  TRANSIT_PATH,
  chargeRequest,
  followOnRequest,
  parseTsysSecret,
  readAnswer,
  tsysCredential,
  voidRequest,
  type TsysCredential,
  type TsysRequest,
  type TsysTransaction,
} from "./wire";

/** How long an unanswered reference blocks re-sends; beyond a day a retry is a new intent. */
const IN_DOUBT_MS = 24 * 60 * 60 * 1000;

async function send(ctx: CallContext, kind: TsysTransaction, request: TsysRequest): Promise<ConnectorResult> {
  const outcome = await httpCall(
    "TSYS",
    {
      url: joinUrl(ctx.baseUrl, TRANSIT_PATH),
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(request),
    },
    deadline(ctx.timeoutMs),
  );
  return outcome.ok ? readAnswer(kind, outcome.status, outcome.body) : outcome.result;
}

/** For money-moving calls: never re-send a reference whose earlier attempt went unanswered. */
async function sendOnce(ctx: CallContext, kind: TsysTransaction, request: TsysRequest, reference: string): Promise<ConnectorResult> {
  if (!(await ctx.inDoubt.begin(reference, IN_DOUBT_MS))) return TIMEOUT;
  const result = await send(ctx, kind, request);
  if (result.outcome !== "timeout") await ctx.inDoubt.answered(reference);
  return result;
}

function withCredential(ctx: CallContext, call: (credential: TsysCredential) => Promise<ConnectorResult>): Promise<ConnectorResult> {
  const credential = tsysCredential(ctx.credential);
  return credential ? call(credential) : Promise.resolve(processorError("tsys credential has no device_id or transaction_key"));
}

export const tsysConnector: Connector = {
  id: "tsys",
  keyKinds: ["device_credential"],
  liveCapable: true,
  defaultBaseUrl: "https://gateway.transit-pass.com",
  parseCredential: parseTsysSecret,

  authorize(req, ctx) {
    return withCredential(ctx, (credential) => sendOnce(ctx, req.capture ? "Sale" : "Auth", chargeRequest(req, credential), req.reference));
  },

  // Capture and Void act on an existing transactionID and cannot start a new charge, so they re-send freely.
  capture(req, ctx) {
    return withCredential(ctx, (credential) => send(ctx, "Capture", followOnRequest("Capture", req, credential)));
  },

  refund(req, ctx) {
    return withCredential(ctx, (credential) => sendOnce(ctx, "Return", followOnRequest("Return", req, credential), req.reference));
  },

  void(req, ctx) {
    return withCredential(ctx, (credential) => send(ctx, "Void", voidRequest(req, credential)));
  },
};
