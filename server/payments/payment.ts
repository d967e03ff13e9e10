import type { PaymentRow, RefundRow } from "../../store/schema";
import type { ConnectorId } from "../connectors/connector";

export type PaymentStatus = "authorized" | "succeeded" | "partially_refunded" | "refunded" | "voided" | "failed";

export interface Refund {
  id: string;
  amount: number;
  reason: string | null;
  created_at: string;
}

/** A payment (spec "Payment", CONTRACT §5): API answers, webhook `data` and the CLI share it. */
export interface Payment {
  id: string;
  object: "payment";
  merchant_id: string;
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  status: PaymentStatus;
  capture_method: "manual" | "automatic";
  connector_id: ConnectorId;
  connector_account_id: string;
  connector_account_short_id: string;
  connector_transaction_id: string | null;
  test_mode: boolean;
  card: { brand: string; last4: string; exp_month: number; exp_year: number };
  failure_code: string | null;
  failure_message: string | null;
  refunds: Refund[];
  description: string | null;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

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
