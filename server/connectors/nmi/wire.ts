/**
 * NMI: the Direct Post API (`/api/transact.php`, form-encoded both ways: `response` 1/2/3,
 * `responsetext`, `transactionid`, `response_code`) and the Query API (`/api/query.php`,
 * form-encoded request, XML `<nm_response>` answer) used to find an earlier attempt by order id.
 * Sources: https://docs.nmi.com/reference/query-1 (Query API), NMI Direct Post API
 * documentation and its result-code appendix, juspay/hyperswitch
 * crates/hyperswitch_connectors/src/connectors/nmi{.rs,/transformers.rs}.
 */
import { createHash } from "node:crypto";
import type { ChargeRequest, ConnectorCredential, ConnectorResult, FollowOnRequest } from "../connector";
import { fromDecimalString, toDecimalString } from "../../payments/currency";
import { processorError, scrubMessage, type FormParams } from "../http-call";

export const TRANSACT_PATH = "/api/transact.php";
export const QUERY_PATH = "/api/query.php";

const SECRET_SHAPE = "nmi secret must be the merchant's API security key: one string without spaces";

export function parseNmiSecret(raw: string): ConnectorCredential {
  // A JSON-looking value is most likely another processor's secret pasted into the wrong account.
  if (!/^[^\s{}"[\]]+$/.test(raw)) throw new Error(SECRET_SHAPE);
  return { security_key: raw };
}

export function nmiSecurityKey(credential: ConnectorCredential): string | undefined {
  return credential.security_key || undefined;
}

/** MMYY, NMI's `ccexp` format. */
export function ccexp(expMonth: number, expYear: number): string {
  return String(expMonth).padStart(2, "0") + String(expYear % 100).padStart(2, "0");
}

/** `orderid` carries our reference: the Query API finds the sale by it if its answer was lost. */
export function chargeParams(req: ChargeRequest, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["type", req.capture ? "sale" : "auth"],
    ["amount", toDecimalString(req.amount, req.currency)],
    ["currency", req.currency.toUpperCase()],
    ["ccnumber", req.card.number],
    ["ccexp", ccexp(req.card.expMonth, req.card.expYear)],
    ["orderid", req.reference],
  ];
}

export function captureParams(req: FollowOnRequest, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["type", "capture"],
    ["transactionid", req.transactionId],
    ["amount", toDecimalString(req.amount, req.currency)],
  ];
}

/**
 * A refund's `orderid`: our reference bound to the payment id. The reference derives
 * from the client's Idempotency-Key alone, so a key reused after its record expired
 * would otherwise find another payment's refund and answer it instead of refunding.
 * Hashed to the length of a charge's reference.
 */
export function refundOrderId(req: FollowOnRequest): string {
  return `pg${createHash("sha256").update(`${req.reference}\n${req.paymentId}`).digest("hex").slice(0, 30)}`;
}

/** A refund is a transaction of its own, so it gets an `orderid` too (`refundOrderId`). */
export function refundParams(req: FollowOnRequest, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["type", "refund"],
    ["transactionid", req.transactionId],
    ["amount", toDecimalString(req.amount, req.currency)],
    ["orderid", refundOrderId(req)],
  ];
}

export function voidParams(req: FollowOnRequest, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["type", "void"],
    ["transactionid", req.transactionId],
  ];
}

export function queryParams(orderId: string, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["order_id", orderId],
  ];
}

/** The Query API by NMI's own id: how a capture or void whose answer was lost is found. */
export function transactionQueryParams(transactionId: string, securityKey: string): FormParams {
  return [
    ["security_key", securityKey],
    ["transaction_id", transactionId],
  ];
}

/** NMI `response_code` (its result-code table) to paygate's connector_code. */
const DECLINE_CODES: ReadonlyMap<string, string> = new Map([
  ["200", "generic_decline"],
  ["201", "do_not_honor"],
  ["202", "insufficient_funds"],
  ["203", "insufficient_funds"], // over limit: no credit left on the card
  ["204", "card_not_supported"], // transaction not allowed
  ["220", "invalid_card"],
  ["221", "invalid_card"],
  ["222", "invalid_card"],
  ["223", "expired_card"],
  ["224", "invalid_card"], // invalid expiration date
  ["225", "incorrect_cvc"],
  ["251", "lost_card"],
  ["252", "stolen_card"],
]);

export function nmiDeclineCode(responseCode: string | undefined): string {
  return (responseCode && DECLINE_CODES.get(responseCode)) ?? "generic_decline";
}

export function readTransactAnswer(status: number, body: string): ConnectorResult {
  if (status >= 300) return processorError(`NMI answered HTTP ${status}`);
  const answer = new URLSearchParams(body);
  const responseCode = answer.get("response_code") ?? "?";
  const text = scrubMessage(answer.get("responsetext") ?? "");
  switch (answer.get("response")) {
    case "1": {
      const transactionId = answer.get("transactionid");
      return transactionId ? { outcome: "approved", transactionId } : processorError("NMI approved without a transactionid");
    }
    case "2":
      return { outcome: "declined", code: nmiDeclineCode(answer.get("response_code") ?? undefined), message: text || "declined" };
    case "3":
      return processorError(`NMI answered an error (response_code ${responseCode}): ${text}`);
    default:
      return processorError("NMI answered without a response of 1, 2 or 3");
  }
}

/** What the Query API knows about an order id: an earlier successful action, nothing, or a bad answer. */
export type EarlierAttempt = { kind: "found"; result: ConnectorResult } | { kind: "none" } | { kind: "unreadable"; result: ConnectorResult };

/**
 * Looks for a successful `actionTypes` action under exactly `orderId` (a loose match on NMI's
 * side must not let another order's sale stand in for ours) and checks it is for our amount.
 */
export function findEarlierAttempt(
  status: number,
  xml: string,
  orderId: string,
  actionTypes: readonly string[],
  amount: number,
  currency: string,
): EarlierAttempt {
  return findEarlierAction(status, xml, { element: "order_id", value: orderId }, actionTypes, amount, currency);
}

/**
 * Looks for a successful `actionType` action (a capture or a void) on exactly the transaction
 * `transactionId`; `amount` undefined skips the amount check (NMI records a void without one).
 */
export function findEarlierFollowOn(
  status: number,
  xml: string,
  transactionId: string,
  actionType: "capture" | "void",
  amount: number | undefined,
  currency: string,
): EarlierAttempt {
  return findEarlierAction(status, xml, { element: "transaction_id", value: transactionId }, [actionType], amount, currency);
}

function findEarlierAction(
  status: number,
  xml: string,
  match: { element: "order_id" | "transaction_id"; value: string },
  actionTypes: readonly string[],
  amount: number | undefined,
  currency: string,
): EarlierAttempt {
  if (status >= 300) return { kind: "unreadable", result: processorError(`NMI query answered HTTP ${status}`) };
  const root = firstElement(xml, "nm_response");
  if (root === undefined) return { kind: "unreadable", result: processorError("NMI query answered without <nm_response>") };
  if (firstElement(root, "error_response") !== undefined) return { kind: "unreadable", result: processorError("NMI query answered an error_response") };
  for (const transaction of elements(root, "transaction")) {
    if (firstElement(transaction, match.element) !== match.value) continue;
    const transactionId = firstElement(transaction, "transaction_id");
    for (const action of elements(transaction, "action")) {
      const actionType = firstElement(action, "action_type");
      if (!actionType || !actionTypes.includes(actionType) || firstElement(action, "success") !== "1") continue;
      const actionAmount = firstElement(action, "amount");
      if (!transactionId || actionAmount === undefined) return { kind: "unreadable", result: processorError("NMI query answered a transaction without id or amount") };
      if (amount !== undefined && fromDecimalString(actionAmount, currency) !== amount) {
        return { kind: "found", result: processorError(`an earlier NMI ${actionType} under this reference was for a different amount`) };
      }
      return { kind: "found", result: { outcome: "approved", transactionId } };
    }
  }
  return { kind: "none" };
}

// The Query API's XML is flat and fixed, so a few patterns read it without an XML parser dependency.

function elements(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))].map((match) => match[1] ?? "");
}

function firstElement(xml: string, tag: string): string | undefined {
  const inner = elements(xml, tag)[0];
  return inner === undefined ? undefined : decodeEntities(inner.trim());
}

function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, name: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[name] ?? "");
}
