import { createHash, randomUUID } from "node:crypto";
import type { AppContext } from "../app-context";
import type { Writes } from "../../store/database";
import type { ConnectorAccount } from "../accounts/connector-account";
import { answeredReference, beginReference } from "../../store/in-doubt-references";
import type { CallContext, Connector, ConnectorId, ConnectorResult, InDoubtReferences } from "../connectors/connector";
import { connectorFor } from "../connectors/registry";
import { ApiError } from "../errors";
import type { Actor } from "../keys/actor";
import { WrongMasterKeyError } from "../secrets/cipher";
import { resolveCredential } from "../secrets/secret-store";

export interface PreparedCall {
  connector: Connector;
  context: CallContext;
}

/**
 * The connector that answers for `account` and what it needs for one call: the
 * credential read now (the latest secret version), the base URL and the timeout.
 * A credential that cannot be read stops the call before any money moves.
 */
export async function prepareCall(app: AppContext, actor: Actor, account: ConnectorAccount): Promise<PreparedCall> {
  const connector = connectorFor(account.connector_id, actor.mode);
  let credential;
  try {
    // A stored secret is decrypted once per version: the cache drops it when any secret changes.
    const value = account.credential_ref.startsWith("secret://")
      ? await app.settings.get(`credential:${account.credential_ref}`, () => resolveCredential(app, account.credential_ref))
      : await resolveCredential(app, account.credential_ref);
    credential = connector.parseCredential(value);
  } catch (error) {
    if (error instanceof WrongMasterKeyError) throw error;
    // These messages name references and shapes, never values (secret-store.ts, parseCredential).
    app.log.error({ account: account.short_id, reason: error instanceof Error ? error.message : "unknown" }, "connector credential unavailable");
    throw new ApiError(502, "connector_error", `The credential of connector account ${account.short_id} cannot be read; the operator must fix ${account.credential_ref}.`, {
      connector_code: "credential_unavailable",
    });
  }
  return {
    connector: app.metrics.connector(connector),
    context: {
      credential,
      baseUrl: app.config.connectorBaseUrls[account.connector_id] ?? connector.defaultBaseUrl,
      timeoutMs: app.config.connectorTimeoutMs,
      inDoubt: inDoubtReferences(app.writes, connector.id),
    },
  };
}

/** A connector's in-doubt references, in the database shared by every process. */
export function inDoubtReferences(writes: Writes, connectorId: ConnectorId): InDoubtReferences {
  return {
    begin: (reference, holdMs) => writes.run((trx) => beginReference(trx, connectorId, reference, Date.now(), holdMs)),
    answered: (reference) => writes.run((trx) => answeredReference(trx, connectorId, reference)),
  };
}

/**
 * The processor-side idempotency key: the same API key and Idempotency-Key always
 * give the same reference, so a client's retry after a timeout cannot charge twice.
 * A follow-on's names its payment too: a key reused (after its record expired) on
 * another payment must never replay that payment's answer at the processor.
 */
export function processorReference(actor: Actor, idempotencyKey: string | undefined, operation: string, paymentId?: string): string {
  const digest = createHash("sha256")
    .update(`${actor.apiKeyId}\n${operation}\n${idempotencyKey ?? ""}${paymentId === undefined ? "" : `\n${paymentId}`}`)
    .digest("hex");
  return `pg${digest.slice(0, 30)}`;
}

/**
 * A refund's id, derived from its processor reference like a payment's: a refund
 * request reused after its idempotency record expired finds its refund already there
 * and is refused before the processor is asked again.
 */
export function refundIdFor(reference: string): string {
  return `re_${createHash("sha256").update(`${reference}\nrefund`).digest("hex").slice(0, 24)}`;
}

/**
 * The payment's id, derived like the reference: a retry after a timeout must send the
 * processor the very same request (Stripe refuses an Idempotency-Key reused with other
 * parameters), and the id travels in it. Laid out as a UUID v4.
 */
export function paymentIdFor(actor: Actor, idempotencyKey: string | undefined, operation: string): string {
  if (idempotencyKey === undefined) return randomUUID();
  const bytes = createHash("sha256").update(`${actor.apiKeyId}\n${operation}\n${idempotencyKey}\npayment`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Timeouts and processor errors end the request before anything is written. */
export function throwIfUncertain(result: ConnectorResult, paymentId?: string): asserts result is Extract<ConnectorResult, { outcome: "approved" | "declined" }> {
  if (result.outcome === "timeout") {
    throw new ApiError(504, "connector_timeout", "The processor did not answer in time. Retry with the same Idempotency-Key: the charge happens at most once.");
  }
  if (result.outcome === "error") {
    throw new ApiError(502, "connector_error", "The processor failed to process the request. Retry with the same Idempotency-Key.", {
      connector_code: result.code,
      ...(paymentId && { payment_id: paymentId }),
    });
  }
}
