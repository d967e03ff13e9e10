import { z } from "zod";
import type { Db } from "../../store/database";
import type { Owner } from "../../store/events";
import type { WebhookEndpointRow } from "../../store/schema";
import { countEndpoints, findEndpoint, insertEndpoint, listEndpoints as listEndpointRows, killPendingDeliveries, updateEndpoint as updateEndpointRow } from "../../store/webhooks";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit, type AuditAction, type AuditEntry } from "../audit/record-audit";
import { ApiError, errors } from "../errors";
import { EVENT_TYPES, type EventType } from "../events/event";
import { isoNow, newWebhookEndpointId, timestamp } from "../ids";
import { toPage, type ListPage, type ListParams } from "../pagination";
import type { Cipher } from "../secrets/cipher";
import { newSigningSecret, ROTATION_GRACE_MS, sealSecret } from "./signing-secrets";
import type { TargetSource } from "./targets";
import { checkEndpointUrl } from "./url-policy";

/** What an endpoint subscribes to: event types, or `"*"` for all of them. */
export type Subscription = EventType | "*";

export const webhookEndpointSchema = z.object({
  id: z.string(),
  object: z.literal("webhook_endpoint"),
  url: z.string(),
  event_types: z.array(z.enum([...EVENT_TYPES, "*"])),
  description: z.string().nullable(),
  status: z.enum(["enabled", "disabled"]),
  created_at: timestamp,
  updated_at: timestamp,
  secret: z.string().optional().meta({ description: "The signing secret in plaintext: only in the create and rotate answers." }),
}).meta({ id: "WebhookEndpoint" });
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

export const deletedWebhookEndpointSchema = z.object({
  id: z.string(),
  object: z.literal("webhook_endpoint"),
  deleted: z.literal(true),
}).meta({ id: "DeletedWebhookEndpoint" });
export type DeletedWebhookEndpoint = z.infer<typeof deletedWebhookEndpointSchema>;

export function toWebhookEndpoint(row: WebhookEndpointRow, secret?: string): WebhookEndpoint {
  return {
    id: row.id,
    object: "webhook_endpoint",
    url: row.url,
    event_types: JSON.parse(row.event_types) as Subscription[],
    description: row.description,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(secret !== undefined && { secret }),
  };
}

/** Whether an endpoint row receives events of `type`. */
export function subscribesTo(row: Pick<WebhookEndpointRow, "event_types">, type: string): boolean {
  const subscriptions = JSON.parse(row.event_types) as string[];
  return subscriptions.includes("*") || subscriptions.includes(type);
}

const endpointEntry = (action: AuditAction, owner: Owner, id: string): AuditEntry => ({
  action,
  target: { type: "webhook_endpoint", id },
  merchantId: owner.merchantId,
  mode: owner.mode,
  details: { mode: owner.mode },
});

const notFound = (id: string) => errors.notFound("webhook_endpoint_not_found", `No webhook endpoint ${id}.`, "id");

/** The owner's endpoint, or 404: another merchant's or mode's endpoint does not exist for the caller. */
export async function getEndpointRow(db: Db, owner: Owner, id: string): Promise<WebhookEndpointRow> {
  const row = await findEndpoint(db, owner, id);
  if (!row) throw notFound(id);
  return row;
}

export interface NewEndpointInput {
  url: string;
  event_types: Subscription[];
  description?: string | undefined;
}

/**
 * Endpoints per merchant and mode, as Stripe allows: every payment event fans out to
 * each of them inside the payment's own commit, so the count bounds that commit.
 */
export const MAX_ENDPOINTS = 16;

/**
 * `targets`: the limits on targets beyond the mode's own (the server's own address;
 * loopback when production), read in `db` as the endpoint is saved.
 */
export async function createEndpoint(db: Db, cipher: Cipher, owner: Owner, input: NewEndpointInput, targets: TargetSource, by: AuditActor): Promise<WebhookEndpoint> {
  if ((await countEndpoints(db, owner)) >= MAX_ENDPOINTS) {
    throw new ApiError(
      400,
      "webhook_endpoint_limit_reached",
      `This merchant already has ${MAX_ENDPOINTS} ${owner.mode} webhook endpoints, the most allowed. Delete one, or subscribe an existing endpoint to more event types.`,
    );
  }
  const id = newWebhookEndpointId();
  const secret = newSigningSecret();
  const now = isoNow();
  const row: WebhookEndpointRow = {
    id,
    merchant_id: owner.merchantId,
    mode: owner.mode,
    url: checkEndpointUrl(input.url, owner.mode, await targets.current(db)),
    event_types: JSON.stringify([...new Set(input.event_types)]),
    description: input.description ?? null,
    status: "enabled",
    secret_encrypted: sealSecret(cipher, id, secret),
    previous_secret_encrypted: null,
    previous_secret_expires_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  await insertEndpoint(db, row);
  await recordAudit(db, by, endpointEntry("webhook_endpoint.created", owner, id));
  return toWebhookEndpoint(row, secret);
}

export async function listEndpoints(db: Db, owner: Owner, params: ListParams): Promise<ListPage<WebhookEndpoint>> {
  const after = params.startingAfter === undefined ? undefined : await findEndpoint(db, owner, params.startingAfter);
  if (params.startingAfter !== undefined && !after) {
    throw new ApiError(400, "parameter_invalid", `starting_after: no webhook endpoint ${params.startingAfter}.`, { param: "starting_after" });
  }
  return toPage(await listEndpointRows(db, owner, params.limit, after), params.limit, (row) => toWebhookEndpoint(row));
}

export interface EndpointPatch {
  url?: string | undefined;
  event_types?: Subscription[] | undefined;
  description?: string | null | undefined;
  status?: "enabled" | "disabled" | undefined;
}

export async function updateEndpoint(db: Db, owner: Owner, id: string, patch: EndpointPatch, targets: TargetSource, by: AuditActor): Promise<WebhookEndpoint> {
  const row = await getEndpointRow(db, owner, id);
  const update = {
    ...(patch.url !== undefined && { url: checkEndpointUrl(patch.url, owner.mode, await targets.current(db)) }),
    ...(patch.event_types !== undefined && { event_types: JSON.stringify([...new Set(patch.event_types)]) }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.status !== undefined && { status: patch.status }),
    updated_at: isoNow(),
  };
  await updateEndpointRow(db, id, update);
  await recordAudit(db, by, { ...endpointEntry("webhook_endpoint.updated", owner, id), details: { mode: owner.mode, changed: Object.keys(patch).filter((k) => patch[k as keyof EndpointPatch] !== undefined) } });
  return toWebhookEndpoint({ ...row, ...update });
}

/** Soft delete (its deliveries keep their history); its pending deliveries become dead. */
export async function deleteEndpoint(db: Db, owner: Owner, id: string, by: AuditActor): Promise<DeletedWebhookEndpoint> {
  await getEndpointRow(db, owner, id);
  const now = isoNow();
  await updateEndpointRow(db, id, { deleted_at: now, updated_at: now });
  await killPendingDeliveries(db, id, now);
  await recordAudit(db, by, endpointEntry("webhook_endpoint.deleted", owner, id));
  return { id, object: "webhook_endpoint", deleted: true };
}

/** A new secret now; the old one keeps signing (as a second `v1=`) for the grace period. */
export async function rotateSecret(db: Db, cipher: Cipher, owner: Owner, id: string, by: AuditActor): Promise<WebhookEndpoint> {
  const row = await getEndpointRow(db, owner, id);
  const secret = newSigningSecret();
  const now = new Date();
  const update = {
    secret_encrypted: sealSecret(cipher, id, secret),
    previous_secret_encrypted: row.secret_encrypted,
    previous_secret_expires_at: new Date(now.getTime() + ROTATION_GRACE_MS).toISOString(),
    updated_at: now.toISOString(),
  };
  await updateEndpointRow(db, id, update);
  await recordAudit(db, by, endpointEntry("webhook_endpoint.secret_rotated", owner, id));
  return toWebhookEndpoint({ ...row, ...update }, secret);
}
