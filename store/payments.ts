import { sql } from "kysely";
import { compiled } from "./compiled-query";
import type { Db, Trx } from "./database";
import type { PaymentRow, RefundRow } from "./schema";
import { olderThan, type Cursor } from "./keyset";

const insertPaymentQuery = compiled((db, row: PaymentRow) => db.insertInto("payments").values(row));

export async function insertPayment(db: Db, row: PaymentRow): Promise<void> {
  await insertPaymentQuery(db, row);
}

const findPaymentQuery = compiled((db, merchantId: string, mode: PaymentRow["mode"], id: string) =>
  db
    .selectFrom("payments")
    .innerJoin("connector_accounts", "connector_accounts.id", "payments.connector_account_id")
    .selectAll("payments")
    .select("connector_accounts.short_id as account_short_id")
    .where("payments.id", "=", id)
    .where("payments.merchant_id", "=", merchantId)
    .where("payments.mode", "=", mode),
);

/** A payment of this merchant and mode, with its account's short id. */
export async function findPayment(db: Db, merchantId: string, mode: string, id: string): Promise<(PaymentRow & { account_short_id: string }) | undefined> {
  return (await findPaymentQuery(db, merchantId, mode as PaymentRow["mode"], id)).rows[0];
}

const refundsQuery = compiled((db, paymentIds: readonly string[]) =>
  db.selectFrom("refunds").selectAll().where("payment_id", "in", paymentIds).orderBy("created_at").orderBy("id"),
);

export async function refundsOf(db: Db, paymentIds: readonly string[]): Promise<RefundRow[]> {
  if (paymentIds.length === 0) return [];
  return (await refundsQuery(db, paymentIds)).rows;
}

export interface PaymentFilter {
  status?: string;
  createdGte?: string;
  createdLte?: string;
  last4?: string;
  amountGte?: number;
  amountLte?: number;
  /** The connector account's short id. */
  account?: string;
  startingAfter?: Cursor;
}

/** Newest first; `limit + 1` rows so the caller can tell `has_more`. */
export async function listPayments(db: Db, merchantId: string, mode: string, limit: number, filter: PaymentFilter): Promise<Array<PaymentRow & { account_short_id: string }>> {
  let query = db
    .selectFrom("payments")
    .innerJoin("connector_accounts", "connector_accounts.id", "payments.connector_account_id")
    .selectAll("payments")
    .select("connector_accounts.short_id as account_short_id")
    .where("payments.merchant_id", "=", merchantId)
    .where("payments.mode", "=", mode as PaymentRow["mode"]);
  if (filter.status) query = query.where("payments.status", "=", filter.status);
  if (filter.createdGte) query = query.where("payments.created_at", ">=", filter.createdGte);
  if (filter.createdLte) query = query.where("payments.created_at", "<=", filter.createdLte);
  if (filter.last4) query = query.where("payments.card_last4", "=", filter.last4);
  if (filter.amountGte !== undefined) query = query.where("payments.amount", ">=", filter.amountGte);
  if (filter.amountLte !== undefined) query = query.where("payments.amount", "<=", filter.amountLte);
  if (filter.account) query = query.where("connector_accounts.short_id", "=", filter.account);
  const after = filter.startingAfter;
  if (after) {
    query = query.where(olderThan(after, "payments"));
  }
  return query.orderBy("payments.created_at", "desc").orderBy("payments.id", "desc").limit(limit + 1).execute();
}

export interface FollowOnClaim {
  operation: string;
  amount: number;
  /** The follow-on's processor reference: who holds the claim. */
  request: string;
  /** The claim's lease end, epoch ms. */
  until: number;
}

/**
 * Claims a payment for one follow-on before the processor is asked: only while it is
 * in one of `from`, no other follow-on holds a live claim (the same request may take
 * its own claim back, e.g. a retry after a timeout), and, for a refund, while the
 * amount still fits in what was captured. One statement, so two processes can never
 * both hold it. Returns whether the claim was taken.
 */
export async function claimPayment(trx: Trx, id: string, from: readonly string[], claim: FollowOnClaim, now: number, refund: boolean, lapsedHoldMs: number): Promise<boolean> {
  // A claim that outlived its lease unsettled (its process died mid-call) holds as an
  // in-doubt one does: `lapsedHoldMs` more, against everyone but its own request.
  const freeAt = sql<number>`pending_until + case when pending_in_doubt = 1 then 0 else ${lapsedHoldMs} end`;
  let query = trx
    .updateTable("payments")
    .set({ pending_operation: claim.operation, pending_amount: claim.amount, pending_request: claim.request, pending_until: claim.until, pending_in_doubt: 0 })
    .where("id", "=", id)
    .where("status", "in", from)
    .where((eb) => eb.or([eb("pending_request", "is", null), eb(freeAt, "<=", now), eb("pending_request", "=", claim.request)]));
  if (refund) query = query.where(sql<boolean>`amount_refunded + ${claim.amount} <= amount_captured`);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Records what the claimed follow-on did and frees the claim, only if `request` still
 * holds it. Returns whether it did.
 */
export async function settleClaim(
  trx: Trx,
  id: string,
  request: string,
  change: { status: string; amountCaptured?: number; refundAmount?: number; updatedAt: string },
): Promise<boolean> {
  const result = await trx
    .updateTable("payments")
    .set({
      status: change.status,
      updated_at: change.updatedAt,
      ...(change.amountCaptured !== undefined && { amount_captured: change.amountCaptured }),
      ...(change.refundAmount !== undefined && { amount_refunded: sql<number>`amount_refunded + ${change.refundAmount}` }),
      ...NO_CLAIM,
    })
    .where("id", "=", id)
    .where("pending_request", "=", request)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The processor refused or failed: nothing moved, the payment is free again. */
export async function releaseClaim(trx: Trx, id: string, request: string): Promise<void> {
  await trx.updateTable("payments").set(NO_CLAIM).where("id", "=", id).where("pending_request", "=", request).execute();
}

/** The processor did not answer: only `request` may take the claim back before `until`. */
export async function holdClaimInDoubt(trx: Trx, id: string, request: string, until: number): Promise<void> {
  await trx.updateTable("payments").set({ pending_in_doubt: 1, pending_until: until }).where("id", "=", id).where("pending_request", "=", request).execute();
}

const NO_CLAIM = { pending_operation: null, pending_amount: null, pending_request: null, pending_until: null, pending_in_doubt: 0 } as const;

const paymentExistsQuery = compiled((db, id: string) => db.selectFrom("payments").select("id").where("id", "=", id));

/** Whether a payment with this id exists, in any merchant or mode (ids derived from a key are global). */
export async function paymentExists(db: Db, id: string): Promise<boolean> {
  return (await paymentExistsQuery(db, id)).rows.length > 0;
}

export async function refundExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom("refunds").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
}

export async function insertRefund(trx: Trx, row: RefundRow): Promise<void> {
  await trx.insertInto("refunds").values(row).execute();
}
