import { violatesUnique } from "../../store/db-errors";
import { insertPayment, paymentExists } from "../../store/payments";
import type { PaymentRow } from "../../store/schema";
import type { AppContext } from "../app-context";
import { selectAccountForCharge } from "../accounts/select-account";
import { ApiError, errors } from "../errors";
import { recordEvents } from "../events/record-event";
import { isoNow } from "../ids";
import type { Actor } from "../keys/actor";
import { loadToken } from "../tokens/tokenize";
import type { UnitOfWork } from "../unit-of-work";
import { paymentIdFor, prepareCall, processorReference, throwIfUncertain } from "./connector-call";
import { toPayment, type Payment } from "./payment";
import type { NewPaymentInput } from "./payment-input";
import { ENTRY } from "./state-machine";

export interface WriteContext {
  unit: UnitOfWork;
  idempotencyKey: string | undefined;
  /** The `X-Connector-Account` header. */
  headerSelector: string | undefined;
}

const keyReused = () => new ApiError(409, "idempotency_key_reused", "This Idempotency-Key already created a payment; use a new key for a new payment.");

/**
 * Authorize (manual or automatic capture) or sale. The processor is asked first,
 * outside any transaction; then the payment, its events and the idempotent answer
 * commit together. A decline is kept as a `failed` payment; a timeout or processor
 * error writes nothing, so a retry with the same Idempotency-Key is safe. A key whose
 * payment already exists (its idempotency record expired) never reaches the processor.
 */
export async function createPayment(app: AppContext, actor: Actor, input: NewPaymentInput, kind: "authorize" | "sale", ctx: WriteContext): Promise<Payment> {
  if (kind === "sale" && input.capture_method === "manual") {
    throw errors.invalid("capture_method", "A sale captures at once; use /v1/payments/authorize with capture_method manual to authorize only.");
  }
  const automatic = kind === "sale" || input.capture_method !== "manual";
  const token = await loadToken(app.db, app.cipher, actor, input.gateway_token);
  const account = await selectAccountForCharge(app, actor, input.connector, { body: input.connector_account, header: ctx.headerSelector });
  const paymentId = paymentIdFor(actor, ctx.idempotencyKey, kind);
  if (await paymentExists(app.db, paymentId)) throw keyReused();
  const { connector, context } = await prepareCall(app, actor, account);
  const result = await connector.authorize(
    {
      amount: input.amount,
      currency: input.currency,
      card: token.card(),
      capture: automatic,
      reference: processorReference(actor, ctx.idempotencyKey, kind),
      paymentId,
      ...(input.description !== undefined && { description: input.description }),
    },
    context,
  );
  throwIfUncertain(result);

  const entry = result.outcome === "approved" ? (automatic ? ENTRY.authorizeAutomatic : ENTRY.authorizeManual) : ENTRY.declined;
  const now = isoNow();
  const row: PaymentRow = {
    id: paymentId,
    merchant_id: actor.merchantId,
    mode: actor.mode,
    amount: input.amount,
    amount_captured: entry.status === "succeeded" ? input.amount : 0,
    amount_refunded: 0,
    currency: input.currency,
    status: entry.status,
    capture_method: automatic ? "automatic" : "manual",
    connector_id: account.connector_id,
    connector_account_id: account.id,
    gateway_token: token.row.token,
    card_brand: token.row.card_brand,
    card_last4: token.row.last4,
    card_exp_month: token.row.exp_month,
    card_exp_year: token.row.exp_year,
    connector_transaction_id: result.outcome === "approved" ? result.transactionId : null,
    failure_code: result.outcome === "declined" ? result.code : null,
    failure_message: result.outcome === "declined" ? result.message : null,
    description: input.description ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
    created_at: now,
    updated_at: now,
    pending_operation: null,
    pending_amount: null,
    pending_request: null,
    pending_until: null,
    pending_in_doubt: 0,
  };
  const payment = toPayment(row, account.short_id, []);
  await ctx.unit.commit(async (trx) => {
    await insertPayment(trx, row).catch((error: unknown) => {
      // The look-up above answers this before any charge; the primary key is what guarantees it.
      if (violatesUnique(error, "payments", ["id"])) throw keyReused();
      throw error;
    });
    await recordEvents(
      app,
      trx,
      entry.events.map((type) => ({
        merchantId: actor.merchantId,
        mode: actor.mode,
        type,
        paymentId,
        newPayment: true,
        // In an automatic capture the authorization event shows the payment as it was then.
        data: type === "payment.authorized" ? { ...payment, status: "authorized", amount_captured: 0 } : { ...payment },
      })),
    );
    return payment;
  });
  app.metrics.payment(account.connector_id, actor.mode, row.status);
  app.webhooks.kick();
  return payment;
}
