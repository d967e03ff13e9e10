import { insertRefund, transitionPayment } from "../../store/payments";
import type { AppContext } from "../app-context";
import { selectAccountForFollowOn } from "../accounts/select-account";
import { ApiError, errors } from "../errors";
import { recordEvent } from "../events/record-event";
import { isoNow, newRefundId } from "../ids";
import type { Actor } from "../keys/actor";
import { prepareCall, processorReference, throwIfUncertain } from "./connector-call";
import type { WriteContext } from "./create-payment";
import type { Payment } from "./payment";
import type { FollowOnInput } from "./payment-input";
import { withPaymentLock } from "./payment-lock";
import { getPayment } from "./retrieve";
import { canFollow, FOLLOW_ONS, type FollowOn } from "./state-machine";

const invalidTransition = (operation: FollowOn, payment: Payment) =>
  new ApiError(409, "invalid_state_transition", `Cannot ${operation} a payment in status ${payment.status}.`, { param: "payment_id" });

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

/**
 * Capture, void or refund, through the payment's original account. The state table
 * is checked before the processor is asked, and again by the conditional update that
 * commits the change, its event and the idempotent answer together.
 */
export async function followOn(app: AppContext, actor: Actor, operation: FollowOn, input: FollowOnInput, ctx: WriteContext): Promise<Payment> {
  // Locked by the requested id and read inside the lock: what is checked is current.
  return withPaymentLock(input.payment_id, async () => {
    const payment = await getPayment(app.db, actor, input.payment_id, "payment_id");
    const account = await selectAccountForFollowOn(app.db, actor, payment.connector_account_id, { body: input.connector_account, header: ctx.headerSelector });
    if (!canFollow(operation, payment.status)) throw invalidTransition(operation, payment);
    const amount = amountFor(operation, payment, input.amount);
    const { connector, context } = await prepareCall(app, actor, account);
    const request = {
      transactionId: payment.connector_transaction_id ?? "",
      amount,
      currency: payment.currency,
      reference: processorReference(actor, ctx.idempotencyKey, operation),
      paymentId: payment.id,
    };
    const result = await connector[operation](request, context);
    throwIfUncertain(result, payment.id);
    if (result.outcome === "declined") {
      throw new ApiError(502, "connector_error", result.message, { connector_code: result.code, payment_id: payment.id });
    }
    const rule = FOLLOW_ONS[operation];
    const now = isoNow();
    const status = rule.to(amount, operation === "refund" ? payment.amount_captured : amount, payment.amount_refunded);
    const updated = await ctx.unit.commit(async (trx) => {
      const moved = await transitionPayment(trx, payment.id, rule.from, {
        status,
        updatedAt: now,
        ...(operation === "capture" && { amountCaptured: amount }),
        ...(operation === "refund" && { refundAmount: amount }),
      });
      if (!moved) throw invalidTransition(operation, payment);
      if (operation === "refund") {
        await insertRefund(trx, { id: newRefundId(), payment_id: payment.id, amount, reason: input.reason ?? null, connector_refund_id: result.transactionId, created_at: now });
      }
      const after = await getPayment(trx, actor, payment.id, "payment_id");
      await recordEvent(trx, { merchantId: actor.merchantId, mode: actor.mode, type: rule.event, paymentId: payment.id, data: { ...after } });
      return after;
    });
    app.webhooks.kick();
    return updated;
  });
}
