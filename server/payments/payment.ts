import { z } from "zod";
import type { PaymentRow, RefundRow } from "../../store/schema";
import type { ConnectorId } from "../connectors/connector";
import { CONNECTOR_IDS } from "../connectors/registry";
import { timestamp } from "../ids";

export const PAYMENT_STATUSES = ["authorized", "succeeded", "partially_refunded", "refunded", "voided", "failed"] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

const refundSchema = z.object({
  id: z.string(),
  amount: z.number().int(),
  reason: z.string().nullable(),
  created_at: timestamp,
});
export type Refund = z.infer<typeof refundSchema>;

/** A payment (spec "Payment", CONTRACT §5): API answers, webhook `data` and the CLI share it. */
export const paymentSchema = z.object({
  id: z.string(),
  object: z.literal("payment"),
  merchant_id: z.string(),
  amount: z.number().int().meta({ description: "In minor units of the currency." }),
  amount_captured: z.number().int(),
  amount_refunded: z.number().int(),
  currency: z.string().meta({ description: "ISO 4217 code, lower case." }),
  status: z.enum(PAYMENT_STATUSES),
  capture_method: z.enum(["manual", "automatic"]),
  connector_id: z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]]),
  connector_account_id: z.string(),
  connector_account_short_id: z.string(),
  connector_transaction_id: z.string().nullable(),
  test_mode: z.boolean(),
  card: z.object({ brand: z.string(), last4: z.string(), exp_month: z.number().int(), exp_year: z.number().int() }),
  failure_code: z.string().nullable(),
  failure_message: z.string().nullable(),
  refunds: z.array(refundSchema),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  created_at: timestamp,
  updated_at: timestamp,
}).meta({ id: "Payment" });
export type Payment = z.infer<typeof paymentSchema>;

export function toPayment(row: PaymentRow, accountShortId: string, refunds: readonly RefundRow[]): Payment {
  return {
    id: row.id,
    object: "payment",
    merchant_id: row.merchant_id,
    amount: row.amount,
    amount_captured: row.amount_captured,
    amount_refunded: row.amount_refunded,
    currency: row.currency,
    status: row.status as PaymentStatus,
    capture_method: row.capture_method,
    connector_id: row.connector_id as ConnectorId,
    connector_account_id: row.connector_account_id,
    connector_account_short_id: accountShortId,
    connector_transaction_id: row.connector_transaction_id,
    test_mode: row.mode === "test",
    card: { brand: row.card_brand, last4: row.card_last4, exp_month: row.card_exp_month, exp_year: row.card_exp_year },
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    refunds: refunds.map((r) => ({ id: r.id, amount: r.amount, reason: r.reason, created_at: r.created_at })),
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
