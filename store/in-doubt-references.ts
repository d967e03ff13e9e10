import type { Db } from "./database";

/**
 * Records that `reference` is about to be sent to `connectorId`, unless an earlier send
 * of it is still unanswered and not yet expired. Returns whether the caller may send.
 * Insert-or-take-over-if-expired, each one statement, so two processes never both may.
 */
export async function beginReference(db: Db, connectorId: string, reference: string, now: number, holdMs: number): Promise<boolean> {
  const inserted = await db
    .insertInto("in_doubt_references")
    .values({ connector_id: connectorId, reference, expires_at: now + holdMs })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return true;
  const taken = await db
    .updateTable("in_doubt_references")
    .set({ expires_at: now + holdMs })
    .where("connector_id", "=", connectorId)
    .where("reference", "=", reference)
    .where("expires_at", "<=", now)
    .executeTakeFirst();
  return taken.numUpdatedRows > 0n;
}

/** The processor answered `reference`: it is no longer in doubt. */
export async function answeredReference(db: Db, connectorId: string, reference: string): Promise<void> {
  await db.deleteFrom("in_doubt_references").where("connector_id", "=", connectorId).where("reference", "=", reference).execute();
}
