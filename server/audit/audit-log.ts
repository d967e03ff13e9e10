import { z } from "zod";
import type { Mode } from "../connectors/connector";
import { findAuditRecord, listAuditRecords } from "../../store/audit";
import type { Db } from "../../store/database";
import type { AuditLogRow } from "../../store/schema";
import { ApiError } from "../errors";
import { timestamp } from "../ids";
import { toPage, type ListPage, type ListParams } from "../pagination";

export const auditRecordSchema = z
  .object({
    id: z.string(),
    object: z.literal("audit_record"),
    created_at: timestamp,
    actor: z.string().meta({ description: "`key_…`, `cli:<os user>` or `session:<id>`." }),
    actor_type: z.string(),
    action: z.string(),
    target: z.object({ type: z.string(), id: z.string() }),
    merchant_id: z.string().nullable(),
    mode: z.enum(["test", "live"]).nullable().meta({ description: "The mode of what changed; null for a merchant, a secret or the whole dead letter queue." }),
    details: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: "AuditRecord" });
export type AuditRecord = z.infer<typeof auditRecordSchema>;

export const toAuditRecord = (row: AuditLogRow): AuditRecord => ({
  id: row.id,
  object: "audit_record",
  created_at: row.created_at,
  actor: row.actor_type === "api_key" ? row.actor_id : `${row.actor_type}:${row.actor_id}`,
  actor_type: row.actor_type,
  action: row.action,
  target: { type: row.target_type, id: row.target_id },
  merchant_id: row.merchant_id,
  mode: row.mode,
  details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
});

export interface AuditQuery extends ListParams {
  since?: string | undefined;
  merchantId?: string | undefined;
  /** An admin key's mode: its own mode's records and the mode-less ones. The CLI reads all. */
  mode?: Mode | undefined;
}

/** A page of the audit log, newest first. */
export async function listAudit(db: Db, query: AuditQuery): Promise<ListPage<AuditRecord>> {
  // Another mode's record is unknown to this reader, as a cursor too.
  const after = query.startingAfter === undefined ? undefined : await findAuditRecord(db, query.startingAfter, query.mode);
  if (query.startingAfter !== undefined && !after) {
    throw new ApiError(400, "parameter_invalid", `starting_after: no audit record ${query.startingAfter}.`, { param: "starting_after" });
  }
  const rows = await listAuditRecords(db, query.limit, { since: query.since, merchantId: query.merchantId, mode: query.mode, after });
  return toPage(rows, query.limit, toAuditRecord);
}
