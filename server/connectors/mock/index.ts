import { randomAlphanumeric } from "../../ids";
import type { CardData, Connector, ConnectorId, ConnectorResult } from "../connector";
import { testCard } from "./test-cards";

const approved = (): ConnectorResult => ({ outcome: "approved", transactionId: `sim_${randomAlphanumeric(20)}` });

function answer(card: CardData): ConnectorResult {
  const known = testCard(card.number);
  if (!known) return { outcome: "declined", code: "generic_decline", message: "Only the sandbox test cards are accepted." };
  if (known.declineCode) return { outcome: "declined", code: known.declineCode, message: known.message };
  return approved();
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
    authorize: async (req) => answer(req.card),
    capture: async () => approved(),
    refund: async () => approved(),
    void: async () => approved(),
  };
}

export const mockConnector: Connector = simulator("mock", ["api_key"]);
