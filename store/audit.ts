import type { Db } from "./database";
import { olderThan } from "./keyset";
import type { AuditLogRow } from "./schema";

export async function insertAuditRecord(db: Db, row: AuditLogRow): Promise<void> {
  await db.insertInto("audit_log").values(row).execute();
}

export async function findAuditRecord(db: Db, id: string): Promise<AuditLogRow | undefined> {
  return db.selectFrom("audit_log").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface AuditFilter {
  /** Only records at or after this ISO time. */
  since?: string | undefined;
  merchantId?: string | undefined;
  /** Only records of this mode and those without one. */
  mode?: "test" | "live" | undefined;
  after?: AuditLogRow | undefined;
}

/** Newest first, `limit + 1` rows so the caller can tell `has_more`. */
export async function listAuditRecords(db: Db, limit: number, filter: AuditFilter): Promise<AuditLogRow[]> {
  let query = db.selectFrom("audit_log").selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit + 1);
  if (filter.since !== undefined) query = query.where("created_at", ">=", filter.since);
  if (filter.merchantId !== undefined) query = query.where("merchant_id", "=", filter.merchantId);
  if (filter.mode !== undefined) {
    const mode = filter.mode;
    query = query.where((eb) => eb.or([eb("mode", "=", mode), eb("mode", "is", null)]));
  }
  if (filter.after) query = query.where(olderThan(filter.after));
  return query.execute();
}
