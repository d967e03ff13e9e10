import type { ExpressionBuilder } from "kysely";
import type { Db } from "./database";
import { olderThan } from "./keyset";
import type { AuditLogRow, Database } from "./schema";

type AuditMode = "test" | "live";

/** The records a reader of `mode` sees: that mode's and those without one. */
const ofMode = (mode: AuditMode) => (eb: ExpressionBuilder<Database, "audit_log">) => eb.or([eb("mode", "=", mode), eb("mode", "is", null)]);

export async function insertAuditRecord(db: Db, row: AuditLogRow): Promise<void> {
  await db.insertInto("audit_log").values(row).execute();
}

/** A record by id; with `mode`, only one that mode's reader sees. */
export async function findAuditRecord(db: Db, id: string, mode?: AuditMode): Promise<AuditLogRow | undefined> {
  let query = db.selectFrom("audit_log").selectAll().where("id", "=", id);
  if (mode !== undefined) query = query.where(ofMode(mode));
  return query.executeTakeFirst();
}

export interface AuditFilter {
  /** Only records at or after this ISO time. */
  since?: string | undefined;
  merchantId?: string | undefined;
  /** Only records of this mode and those without one. */
  mode?: AuditMode | undefined;
  after?: AuditLogRow | undefined;
}

/** Newest first, `limit + 1` rows so the caller can tell `has_more`. */
export async function listAuditRecords(db: Db, limit: number, filter: AuditFilter): Promise<AuditLogRow[]> {
  let query = db.selectFrom("audit_log").selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit + 1);
  if (filter.since !== undefined) query = query.where("created_at", ">=", filter.since);
  if (filter.merchantId !== undefined) query = query.where("merchant_id", "=", filter.merchantId);
  if (filter.mode !== undefined) query = query.where(ofMode(filter.mode));
  if (filter.after) query = query.where(olderThan(filter.after));
  return query.execute();
}
