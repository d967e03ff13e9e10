import { setTimeout as sleep } from "node:timers/promises";
import { claimPayment, findPayment, holdClaimInDoubt, insertRefund, refundExists, releaseClaim, settleClaim } from "../../store/payments";
import type { PaymentRow } from "../../store/schema";
import type { AppContext } from "../app-context";
import { selectAccountForFollowOn } from "../accounts/select-account";
import type { ConnectorResult, FollowOnRequest } from "../connectors/connector";
import { ApiError, errors } from "../errors";
import { recordEvents } from "../events/record-event";
import { isoNow } from "../ids";
import type { Actor } from "../keys/actor";
import { prepareCall, processorReference, refundIdFor, throwIfUncertain, type PreparedCall } from "./connector-call";
import type { WriteContext } from "./create-payment";
import { toPayment, type Payment } from "./payment";
import type { FollowOnInput } from "./payment-input";
import { getPayment, paymentNotFound } from "./retrieve";
import { canFollow, FOLLOW_ONS, type FollowOn } from "./state-machine";

/** Beyond the processor timeout, how long a live claim lasts; after it, the claim is in doubt (see `lapsed`). */
const CLAIM_GRACE_MS = 60_000;
/** How long an unanswered follow-on keeps the payment from everyone but its own retry (like TSYS's in-doubt references). */
const IN_DOUBT_HOLD_MS = 24 * 60 * 60 * 1000;
/** Beyond the processor timeout, how long a request waits for another follow-on on the same payment to finish. */
const WAIT_MARGIN_MS = 5_000;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;

const invalidTransition = (operation: FollowOn, payment: Payment) =>
  new ApiError(409, "invalid_state_transition", `Cannot ${operation} a payment in status ${payment.status}.`, { param: "payment_id" });

/**
 * A claim whose lease ran out with neither an answer recorded nor the claim released:
 * its process died (a kill, a crash) after claiming, perhaps after the processor moved
 * the money. It is treated as an unanswered call: only its own request's retry, which
 * re-asks the processor with the same reference, may take it, for `IN_DOUBT_HOLD_MS`.
 */
const lapsed = (row: PaymentRow, now: number): boolean => !row.pending_in_doubt && row.pending_request !== null && (row.pending_until ?? 0) <= now;

/** Until when the claim keeps every other request out. */
const heldUntil = (row: PaymentRow): number => (row.pending_until ?? 0) + (row.pending_in_doubt ? 0 : IN_DOUBT_HOLD_MS);

/** Answered with Retry-After, so idempotency does not keep it: the same key works once the payment is free. */
const busy = (row: PaymentRow, now: number) =>
  row.pending_in_doubt || lapsed(row, now)
    ? new ApiError(
        409,
        "conflict",
        `A ${row.pending_operation} of this payment got no answer from the processor; until that request is retried with its Idempotency-Key, no other capture, refund or void can run.`,
        { param: "payment_id", payment_id: row.id, headers: { "retry-after": "60" } },
      )
    : new ApiError(409, "conflict", `Another ${row.pending_operation} of this payment is still in progress. Retry later.`, {
        param: "payment_id",
        payment_id: row.id,
        headers: { "retry-after": "1" },
      });

/** How much `operation` moves: the request's amount within what the payment allows, else all of it. */
function amountFor(operation: FollowOn, payment: Payment, requested: number | undefined): number {
  if (operation === "void") {
    if (requested !== undefined && requested !== payment.amount) throw errors.invalid("amount", "A void releases the whole authorization; omit amount.");
    return payment.amount;
  }
  const limit = operation === "capture" ? payment.amount : payment.amount_captured - payment.amount_refunded;
  if (requested !== undefined && requested > limit) {
    throw new ApiError(400, "amount_too_large", `amount ${requested} exceeds the ${limit} that can be ${operation === "capture" ? "captured" : "refunded"}.`, { param: "amount" });
  }
  return requested ?? limit;
}

async function readPayment(app: AppContext, actor: Actor, id: string): Promise<PaymentRow & { account_short_id: string }> {
  const row = await findPayment(app.db, actor.merchantId, actor.mode, id);
  if (!row) throw paymentNotFound(id, "payment_id");
  return row;
}

/**
 * Takes the database claim on the payment for this request (see `claimPayment`).
 * While another follow-on holds it, polls with a growing pause for as long as that one
 * can take to hear from the processor, so concurrent requests that fit all run, one
 * after the other. What is checked (status, amount) is re-read after every wait, and
 * the row is read once more after the claim: nothing else can change it from then on.
 */
async function claim(
  app: AppContext,
  actor: Actor,
  operation: FollowOn,
  input: FollowOnInput,
  reference: string,
  first: PaymentRow & { account_short_id: string },
): Promise<{ row: PaymentRow & { account_short_id: string }; payment: Payment; amount: number }> {
  const giveUpAt = Date.now() + app.config.connectorTimeoutMs + WAIT_MARGIN_MS;
  let pause = FIRST_POLL_MS;
  let row = first;
  for (;;) {
    const now = Date.now();
    const heldByOther = row.pending_request !== null && row.pending_request !== reference && heldUntil(row) > now;
    if (heldByOther) {
      if (row.pending_in_doubt || lapsed(row, now) || now >= giveUpAt) throw busy(row, now);
      await sleep(pause);
      pause = Math.min(pause * 2, MAX_POLL_MS);
    } else {
      const payment = toPayment(row, row.account_short_id, []);
      if (!canFollow(operation, payment.status)) throw invalidTransition(operation, payment);
      const amount = amountFor(operation, payment, input.amount);
      const until = now + app.config.connectorTimeoutMs + CLAIM_GRACE_MS;
      const taken = await app.writes.run((trx) =>
        claimPayment(trx, row.id, FOLLOW_ONS[operation].from, { operation, amount, request: reference, until }, now, operation === "refund", IN_DOUBT_HOLD_MS),
      );
      if (taken) {
        const held = await readPayment(app, actor, input.payment_id);
        return { row: held, payment: toPayment(held, held.account_short_id, []), amount };
      }
    }
    row = await readPayment(app, actor, input.payment_id);
  }
}

/** Keeps the claim for the same request's retry alone: the processor may have moved the money. */
const holdInDoubt = (app: AppContext, request: Pick<FollowOnRequest, "paymentId" | "reference">) =>
  app.writes.run((trx) => holdClaimInDoubt(trx, request.paymentId, request.reference, Date.now() + IN_DOUBT_HOLD_MS));

/** Asks the processor; anything but an answer (a timeout, a throw) leaves the claim in doubt. */
async function call(app: AppContext, operation: FollowOn, prepared: PreparedCall, request: FollowOnRequest): Promise<ConnectorResult> {
  const inDoubt = () => holdInDoubt(app, request);
  let result: ConnectorResult;
  try {
    result = await prepared.connector[operation](request, prepared.context);
  } catch (error) {
    await inDoubt();
    throw error;
  }
  if (result.outcome === "timeout") await inDoubt();
  else if (result.outcome !== "approved") await app.writes.run((trx) => releaseClaim(trx, request.paymentId, request.reference));
  return result;
}

/**
 * Commits what an approved call did. The processor has moved the money: if the commit
 * fails (the database lost, a constraint), the claim is held in doubt so that no other
 * request can move the same money again; the same request's retry re-asks the processor
 * with the same reference and records the answer.
 */
async function recordApproved<T>(app: AppContext, request: Pick<FollowOnRequest, "paymentId" | "reference">, commit: () => Promise<T>): Promise<T> {
  try {
    return await commit();
  } catch (error) {
    await holdInDoubt(app, request).catch((holdError: unknown) => app.log.error({ err: holdError, payment_id: request.paymentId }, "could not hold an approved follow-on's claim in doubt"));
    throw error;
  }
}

/**
 * Capture, void or refund, through the payment's original account. The payment is
 * claimed in the database before the processor is asked (so no other process can ask
 * it to move the same money), and the change, its event, the idempotent answer and the
 * end of the claim commit together. A decline or processor error frees the claim; a
 * timeout keeps it, in doubt, for the same request's retry alone.
 */
export async function followOn(app: AppContext, actor: Actor, operation: FollowOn, input: FollowOnInput, ctx: WriteContext): Promise<Payment> {
  const first = await readPayment(app, actor, input.payment_id);
  const account = await selectAccountForFollowOn(app.db, actor, first.connector_account_id, { body: input.connector_account, header: ctx.headerSelector });
  const prepared = await prepareCall(app, actor, account);
  const reference = processorReference(actor, ctx.idempotencyKey, operation, first.id);
  if (operation === "refund" && (await refundExists(app.db, refundIdFor(reference)))) {
    throw new ApiError(409, "idempotency_key_reused", "This Idempotency-Key already refunded this payment; use a new key for a new refund.", { param: "payment_id" });
  }
  const { row, payment, amount } = await claim(app, actor, operation, input, reference, first);

  const result = await call(app, operation, prepared, {
    transactionId: payment.connector_transaction_id ?? "",
    amount,
    currency: payment.currency,
    reference,
    paymentId: payment.id,
  });
  throwIfUncertain(result, payment.id);
  if (result.outcome === "declined") {
    throw new ApiError(502, "connector_error", result.message, { connector_code: result.code, payment_id: payment.id });
  }
  const rule = FOLLOW_ONS[operation];
  const now = isoNow();
  const status = rule.to(amount, operation === "refund" ? row.amount_captured : amount, row.amount_refunded);
  const updated = await recordApproved(app, { paymentId: payment.id, reference }, () => ctx.unit.commit(async (trx) => {
    const settled = await settleClaim(trx, payment.id, reference, {
      status,
      updatedAt: now,
      ...(operation === "capture" && { amountCaptured: amount }),
      ...(operation === "refund" && { refundAmount: amount }),
    });
    if (!settled) {
      // Only possible if this call outlived its lease by a minute; a retry with the same key re-asks the processor with the same reference.
      app.log.error({ payment_id: payment.id, operation }, "follow-on answered after its claim expired; nothing recorded");
      throw errors.internal();
    }
    if (operation === "refund") {
      await insertRefund(trx, { id: refundIdFor(reference), payment_id: payment.id, amount, reason: input.reason ?? null, connector_refund_id: result.transactionId, created_at: now });
    }
    const after = await getPayment(trx, actor, payment.id, "payment_id");
    await recordEvents(app, trx, [{ merchantId: actor.merchantId, mode: actor.mode, type: rule.event, paymentId: payment.id, data: { ...after } }]);
    return after;
  }));
  app.metrics.payment(updated.connector_id, actor.mode, updated.status);
  app.webhooks.kick();
  return updated;
}
