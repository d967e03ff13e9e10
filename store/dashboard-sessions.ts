import type { Db } from "./database";
import type { Insertable } from "kysely";
import type { ApiKeyRow, DashboardSessionRow, DashboardSessionsTable } from "./schema";

export async function insertSession(db: Db, row: Insertable<DashboardSessionsTable>): Promise<void> {
  await db.insertInto("dashboard_sessions").values(row).execute();
}

export async function findSession(db: Db, id: string): Promise<DashboardSessionRow | undefined> {
  return db.selectFrom("dashboard_sessions").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function touchSession(db: Db, id: string, at: number): Promise<void> {
  await db.updateTable("dashboard_sessions").set({ last_seen_at: at }).where("id", "=", id).execute();
}

export async function chooseMerchant(db: Db, id: string, merchantId: string | null): Promise<void> {
  await db.updateTable("dashboard_sessions").set({ chosen_merchant_id: merchantId }).where("id", "=", id).execute();
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom("dashboard_sessions").where("id", "=", id).execute();
}

/**
 * Ends every session opened with a key and spends its pending sign-in links: a rotated
 * key's old value must open nothing, and a session is that value's extension.
 */
export async function endDashboardAccessOfKey(db: Db, apiKeyId: string): Promise<void> {
  await db.deleteFrom("dashboard_sessions").where("api_key_id", "=", apiKeyId).execute();
  await db.deleteFrom("dashboard_sign_in_tokens").where("api_key_id", "=", apiKeyId).execute();
}

/** Sessions idle since before `idleBefore`: nobody can use them again. */
export async function deleteIdleSessions(db: Db, idleBefore: number): Promise<void> {
  await db.deleteFrom("dashboard_sessions").where("last_seen_at", "<", idleBefore).execute();
}

/** The key a session acts with, with its merchant's short id, whatever its status. */
export async function findApiKeyById(db: Db, id: string): Promise<(ApiKeyRow & { merchant_short_id: string }) | undefined> {
  return db
    .selectFrom("api_keys")
    .innerJoin("merchants", "merchants.id", "api_keys.merchant_id")
    .selectAll("api_keys")
    .select("merchants.short_id as merchant_short_id")
    .where("api_keys.id", "=", id)
    .executeTakeFirst();
}

export async function insertSignInToken(db: Db, row: { id: string; api_key_id: string; expires_at: number }): Promise<void> {
  await db.insertInto("dashboard_sign_in_tokens").values(row).execute();
}

/**
 * Spends a sign-in token: deleted whether or not it is still valid, and only the
 * request whose delete removed it gets its key, so it works once across instances.
 */
export async function spendSignInToken(db: Db, id: string, now: number): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom("dashboard_sign_in_tokens").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) return undefined;
    const removed = await trx.deleteFrom("dashboard_sign_in_tokens").where("id", "=", id).executeTakeFirst();
    return removed.numDeletedRows > 0n && row.expires_at > now ? row.api_key_id : undefined;
  });
}
