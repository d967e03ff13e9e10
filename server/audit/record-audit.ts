import type { Mode } from "../connectors/connector";
import { insertAuditRecord } from "../../store/audit";
import type { Db } from "../../store/database";
import { isoNow, newAuditId } from "../ids";
import { actorId, type AuditActor } from "./audit-actor";

export type AuditAction =
  | "merchant.created"
  | "api_key.created"
  | "api_key.rotated"
  | "api_key.revoked"
  | "connector_account.created"
  | "connector_account.updated"
  | "connector_account.deleted"
  | "secret.version_created"
  | "webhook_endpoint.created"
  | "webhook_endpoint.updated"
  | "webhook_endpoint.deleted"
  | "webhook_endpoint.secret_rotated"
  | "routing.updated"
  | "webhook.replayed";

export type AuditTargetType = "merchant" | "api_key" | "connector_account" | "secret" | "webhook_endpoint" | "routing" | "event" | "dead_letter_queue";

export interface AuditEntry {
  action: AuditAction;
  target: { type: AuditTargetType; id: string };
  merchantId: string | null;
  /**
   * The mode of what changed, or null for what has none (a merchant, a stored secret,
   * the whole dead letter queue). An admin key reads its own mode's records and the
   * mode-less ones, as it reaches only its own mode's keys and accounts.
   */
  mode: Mode | null;
  /** Facts that are never secret: names of changed fields, a version number, a mode. */
  details?: Record<string, unknown>;
}

/**
 * Records a change. Call it with the transaction that makes the change, after the
 * change, so the record and the change commit together or not at all.
 */
export async function recordAudit(db: Db, by: AuditActor, entry: AuditEntry): Promise<void> {
  await insertAuditRecord(db, {
    id: newAuditId(),
    created_at: isoNow(),
    actor_type: by.type,
    actor_id: actorId(by),
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id,
    merchant_id: entry.merchantId,
    mode: entry.mode,
    details: entry.details === undefined ? null : JSON.stringify(entry.details),
  });
}
