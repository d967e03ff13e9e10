import { rmSync } from "node:fs";
import type { ChargeRequest, ConnectorId, ConnectorResult, FollowOnRequest, InDoubtReferences } from "../../server/connectors/connector";
import { inDoubtReferences } from "../../server/payments/connector-call";
import { migrate } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { GroupCommit } from "../../store/group-commit";
import { freshDataDir } from "../support/harness";
import { TEST_CARDS } from "../fakes/http-fake";
import { futureExpiry } from "../support/expiry";

/**
 * Request builders for the adapter tests: each call gets a fresh reference and
 * payment id (prefixed per processor), as separate client requests would.
 */
export function requestBuilders(processor: string) {
  let sequence = 0;
  const next = () => {
    sequence += 1;
    return { reference: `ref-${processor}-${sequence}`, paymentId: `pay_${processor}_${sequence}` };
  };
  return {
    charge: (overrides: Partial<ChargeRequest> = {}): ChargeRequest => ({
      amount: 1050,
      currency: "usd",
      card: { number: TEST_CARDS.approve, expMonth: 4, expYear: futureExpiry().exp_year },
      capture: false,
      ...next(),
      ...overrides,
    }),
    followOn: (transactionId: string, amount: number): FollowOnRequest => ({ transactionId, amount, currency: "usd", ...next() }),
  };
}

export function approvedId(result: ConnectorResult): string {
  if (result.outcome !== "approved") throw new Error(`expected approval, got ${JSON.stringify(result)}`);
  return result.transactionId;
}

/** The connector's in-doubt references in a real store of their own (a fresh data dir), as the server keeps them. */
export async function storeInDoubt(connectorId: ConnectorId): Promise<{ inDoubt: InDoubtReferences; close(): Promise<void> }> {
  const dataDir = freshDataDir();
  const store = openSqliteStore(dataDir);
  await migrate(store.db);
  return {
    inDoubt: inDoubtReferences(new GroupCommit(store.db), connectorId),
    async close() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
