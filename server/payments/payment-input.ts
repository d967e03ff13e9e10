import { z } from "zod";
import { CONNECTOR_IDS } from "../connectors/registry";
import type { ConnectorId } from "../connectors/connector";
import { normalizeCurrency } from "./currency";

/** 1..99,999,999 minor units (CONTRACT §1). */
/** The largest amount paygate accepts (minor units); the store's amount columns hold it on both engines. */
export const MAX_AMOUNT = 99_999_999;
export const amount = z.number().int().min(1).max(MAX_AMOUNT);

export const currency = z
  .string()
  .transform((value, ctx) => {
    const code = normalizeCurrency(value);
    if (!code) ctx.addIssue({ code: "custom", message: `Unknown currency "${value}": use an ISO 4217 code such as usd.` });
    return code ?? "";
  });

const metadata = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, { message: "metadata holds at most 50 keys." });

const selector = z.string().max(100);

export const newPaymentBody = z.strictObject({
  amount,
  currency,
  gateway_token: z.string().min(1).max(100),
  capture_method: z.enum(["manual", "automatic"]).optional(),
  connector: z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]]).optional(),
  connector_account: selector.optional(),
  description: z.string().max(1000).optional(),
  metadata: metadata.optional(),
}).meta({ id: "NewPayment" });
export type NewPaymentInput = z.output<typeof newPaymentBody>;

const paymentId = z.string().min(1).max(100);

export const captureBody = z.strictObject({ payment_id: paymentId, amount: amount.optional(), connector_account: selector.optional() }).meta({ id: "CaptureOrVoid" });
export const voidBody = captureBody;
export const refundBody = captureBody.extend({ reason: z.string().max(500).optional() });
export type FollowOnInput = z.output<typeof refundBody>;
