import type { EventType } from "../events/event";
import type { PaymentStatus } from "./payment";

/**
 * The payment state machine of CONTRACT §5, as data. New payments enter through
 * `ENTRY`; existing ones move only through `FOLLOW_ONS`; anything else is a 409
 * `invalid_state_transition`.
 */
export const ENTRY = {
  /** authorize with capture_method manual */
  authorizeManual: { status: "authorized", events: ["payment.authorized"] },
  /** authorize with capture_method automatic (the default), or sale */
  authorizeAutomatic: { status: "succeeded", events: ["payment.authorized", "payment.captured"] },
  /** any new payment the processor declined; the row is kept */
  declined: { status: "failed", events: ["payment.failed"] },
} as const satisfies Record<string, { status: PaymentStatus; events: readonly EventType[] }>;

export type FollowOn = "capture" | "void" | "refund";

export interface FollowOnRule {
  from: readonly PaymentStatus[];
  event: EventType;
  /** The status after moving `amount`, given what was captured and refunded before. */
  to(amount: number, captured: number, refundedBefore: number): PaymentStatus;
}

export const FOLLOW_ONS: Readonly<Record<FollowOn, FollowOnRule>> = {
  capture: { from: ["authorized"], event: "payment.captured", to: () => "succeeded" },
  void: { from: ["authorized"], event: "payment.voided", to: () => "voided" },
  refund: {
    from: ["succeeded", "partially_refunded"],
    event: "payment.refunded",
    to: (amount, captured, refundedBefore) => (refundedBefore + amount >= captured ? "refunded" : "partially_refunded"),
  },
};

export function canFollow(operation: FollowOn, status: PaymentStatus): boolean {
  return FOLLOW_ONS[operation].from.includes(status);
}
