import { sql } from "kysely";
import type { Db, Trx } from "./database";
import type { PaymentRow, RefundRow } from "./schema";
import { olderThan, type Cursor } from "./keyset";

export async function insertPayment(db: Db, row: PaymentRow): Promise<void> {
  await db.insertInto("payments").values(row).execute();
}

/** A payment of this merchant and mode, with its account's short id. */
export async function findPayment(db: Db, merchantId: string, mode: string, id: string): Promise<(PaymentRow & { account_short_id: string }) | undefined> {
  return db
    .selectFrom("payments")
    .innerJoin("connector_accounts", "connector_accounts.id", "payments.connector_account_id")
    .selectAll("payments")
    .select("connector_accounts.short_id as account_short_id")
    .where("payments.id", "=", id)
    .where("payments.merchant_id", "=", merchantId)
    .where("payments.mode", "=", mode as PaymentRow["mode"])
    .executeTakeFirst();
}

export async function refundsOf(db: Db, paymentIds: readonly string[]): Promise<RefundRow[]> {
  if (paymentIds.length === 0) return [];
  return db.selectFrom("refunds").selectAll().where("payment_id", "in", paymentIds).orderBy("created_at").orderBy("id").execute();
}

export interface PaymentFilter {
  status?: string;
  createdGte?: string;
  createdLte?: string;
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
  const after = filter.startingAfter;
  if (after) {
    query = query.where(olderThan(after, "payments"));
  }
  return query.orderBy("payments.created_at", "desc").orderBy("payments.id", "desc").limit(limit + 1).execute();
}

/**
 * Moves a payment only if it is still in one of `from` (and, for refunds, only while
 * the total stays within what was captured): the state check and the write are one
 * statement, so a racing request cannot slip between them. Returns whether it moved.
 */
export async function transitionPayment(
  trx: Trx,
  id: string,
  from: readonly string[],
  change: { status: string; amountCaptured?: number; refundAmount?: number; connectorTransactionId?: string; updatedAt: string },
): Promise<boolean> {
  let query = trx
    .updateTable("payments")
    .set({
      status: change.status,
      updated_at: change.updatedAt,
      ...(change.amountCaptured !== undefined && { amount_captured: change.amountCaptured }),
      ...(change.refundAmount !== undefined && { amount_refunded: sql<number>`amount_refunded + ${change.refundAmount}` }),
    })
    .where("id", "=", id)
    .where("status", "in", from);
  if (change.refundAmount !== undefined) {
    query = query.where(sql<boolean>`amount_refunded + ${change.refundAmount} <= amount_captured`);
  }
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertRefund(trx: Trx, row: RefundRow): Promise<void> {
  await trx.insertInto("refunds").values(row).execute();
}
