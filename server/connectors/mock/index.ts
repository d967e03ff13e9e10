import { setTimeout as sleep } from "node:timers/promises";
import { randomAlphanumeric } from "../../ids";
import type { CallContext, ChargeRequest, Connector, ConnectorId, ConnectorResult, FollowOnRequest } from "../connector";
import { TEST_CARDS, testCard, type MockScenario } from "./test-cards";

/** How long the simulator remembers a `second_try` reference it failed, like a processor's idempotency window. */
const SECOND_TRY_MEMORY_MS = 24 * 60 * 60 * 1000;

/**
 * The transaction id carries the scenario a follow-on must act out: a follow-on
 * request knows the transaction, never the card, and a prefix needs no state.
 */
const FOLLOW_ON_MARKS: Partial<Record<MockScenario, string>> = { capture_declined: "sim_cd_", refund_declined: "sim_rd_" };

const approved = (prefix = "sim_"): ConnectorResult => ({ outcome: "approved", transactionId: `${prefix}${randomAlphanumeric(20)}` });
const processingError = (message: string): ConnectorResult => ({ outcome: "error", code: "processing_error", message });

async function authorize(req: ChargeRequest, ctx: CallContext): Promise<ConnectorResult> {
  const known = testCard(req.card.number);
  if (!known) return { outcome: "declined", code: "generic_decline", message: "Only the sandbox test cards are accepted." };
  if (known.declineCode) return { outcome: "declined", code: known.declineCode, message: known.message };
  switch (known.scenario) {
    case "timeout":
      // A processor that never answers is noticed at the configured timeout, as with a real one.
      await sleep(ctx.timeoutMs);
      return { outcome: "timeout" };
    case "processing_error":
      return processingError(known.message);
    case "second_try":
      // The memory of the first attempt lives in the database (the in-doubt references,
      // keyed by the processor reference), so a retry through another process or after
      // a restart still succeeds; the success forgets it.
      if (await ctx.inDoubt.begin(req.reference, SECOND_TRY_MEMORY_MS)) return processingError(known.message);
      await ctx.inDoubt.answered(req.reference);
      return approved();
    case undefined:
      return approved();
    default:
      return approved(FOLLOW_ON_MARKS[known.scenario]);
  }
}

/** A follow-on that approves, unless the transaction came from the card whose scenario declines it. */
function followOn(declines: "capture_declined" | "refund_declined") {
  const mark = FOLLOW_ON_MARKS[declines] as string;
  const message = TEST_CARDS.find((card) => card.scenario === declines)?.message ?? "Declined.";
  return async (req: FollowOnRequest): Promise<ConnectorResult> =>
    req.transactionId.startsWith(mark) ? { outcome: "declined", code: declines, message } : approved();
}

/**
 * The sandbox simulator: answers by the test-card table, never touches a network.
 * The built-in `mock` connector is this simulator; in test mode every other
 * connector id is served by it too (CONTRACT §6), under that connector's name.
 */
export function simulator(id: ConnectorId, keyKinds: readonly string[]): Connector {
  return {
    id,
    keyKinds,
    liveCapable: false,
    defaultBaseUrl: "",
    parseCredential(raw) {
      if (raw.trim() === "") throw new Error("the credential is empty");
      return { value: raw };
    },
    authorize,
    capture: followOn("capture_declined"),
    refund: followOn("refund_declined"),
    void: async () => approved(),
  };
}

export const mockConnector: Connector = simulator("mock", ["api_key"]);
