import { z } from "zod";
import type { Db } from "../../store/database";
import { findPayment, listPayments as listPaymentRows, refundsOf } from "../../store/payments";
import type { PaymentRow } from "../../store/schema";
import { ApiError, errors } from "../errors";
import { parse } from "../http/validate";
import type { Actor } from "../keys/actor";
import { toPage, type ListPage, type ListParams } from "../pagination";
import { PAYMENT_STATUSES, toPayment, type Payment } from "./payment";
import { MAX_AMOUNT } from "./payment-input";

export const paymentNotFound = (id: string, param: string) =>
  new ApiError(404, "payment_intent_not_found", `No such payment: ${id}.`, { param });

/**
 * The refunds of these payments. Only a payment with money refunded has any: a refund
 * row and its amount (at least 1) commit together (follow-on.ts), so most reads need
 * no query here.
 */
function refundsOfRows(db: Db, rows: readonly PaymentRow[]) {
  return refundsOf(db, rows.filter((row) => row.amount_refunded > 0).map((row) => row.id));
}

/** The caller's payment in the caller's mode; anything else is 404 (spec: "or belongs to another environment"). */
export async function getPayment(db: Db, actor: Actor, id: string, param = "id"): Promise<Payment> {
  const row = await findPayment(db, actor.merchantId, actor.mode, id);
  if (!row) throw paymentNotFound(id, param);
  return toPayment(row, row.account_short_id, await refundsOfRows(db, [row]));
}

const isoTime = z.iso.datetime({ offset: true });
export const listFilter = z.object({
  status: z.enum(PAYMENT_STATUSES).optional(),
  created_gte: isoTime.optional(),
  created_lte: isoTime.optional(),
  last4: z.string().regex(/^\d{4}$/, { error: "last4 must be 4 digits." }).optional(),
  amount_gte: z.coerce.number().int().min(0).max(MAX_AMOUNT).optional(),
  amount_lte: z.coerce.number().int().min(0).max(MAX_AMOUNT).optional(),
  connector_account: z.string().min(1).optional().meta({ description: "The connector account's short id (`ca_…`)." }),
});

/**
 * The filter as an instant in the stored form (ISO UTC, milliseconds), so the text
 * comparison in SQL is a comparison of instants. An offset can push a valid year-9999
 * or year-0000 time out of that form (`+010000-…` sorts before every stored time): 400.
 */
function toStoredInstant(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  const iso = new Date(value).toISOString();
  if (!/^\d{4}-/.test(iso)) throw errors.invalid(param, `${param} must be between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.`);
  return iso;
}

export async function listPayments(db: Db, actor: Actor, params: ListParams, query: URLSearchParams): Promise<ListPage<Payment>> {
  const filter = parse(listFilter, {
    status: query.get("status") ?? undefined,
    created_gte: query.get("created_gte") ?? undefined,
    created_lte: query.get("created_lte") ?? undefined,
    last4: query.get("last4") ?? undefined,
    amount_gte: query.get("amount_gte") ?? undefined,
    amount_lte: query.get("amount_lte") ?? undefined,
    connector_account: query.get("connector_account") ?? undefined,
  });
  const after = params.startingAfter === undefined ? undefined : await findPayment(db, actor.merchantId, actor.mode, params.startingAfter);
  if (params.startingAfter !== undefined && !after) throw paymentNotFound(params.startingAfter, "starting_after");
  const rows = await listPaymentRows(db, actor.merchantId, actor.mode, params.limit, {
    ...(filter.status && { status: filter.status }),
    ...(filter.created_gte && { createdGte: toStoredInstant(filter.created_gte, "created_gte") }),
    ...(filter.created_lte && { createdLte: toStoredInstant(filter.created_lte, "created_lte") }),
    ...(filter.last4 && { last4: filter.last4 }),
    ...(filter.amount_gte !== undefined && { amountGte: filter.amount_gte }),
    ...(filter.amount_lte !== undefined && { amountLte: filter.amount_lte }),
    ...(filter.connector_account && { account: filter.connector_account }),
    ...(after && { startingAfter: after }),
  });
  const page = rows.slice(0, params.limit);
  const refunds = await refundsOfRows(db, page);
  return toPage(rows, params.limit, (row) => toPayment(row, row.account_short_id, refunds.filter((r) => r.payment_id === row.id)));
}
