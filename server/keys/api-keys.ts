import { findApiKey, insertApiKey, listApiKeys, updateActiveApiKey } from "../../store/api-keys";
import { endDashboardAccessOfKey } from "../../store/dashboard-sessions";
import type { Db } from "../../store/database";
import type { ApiKeyRow } from "../../store/schema";
import type { Mode } from "../connectors/connector";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { ApiError } from "../errors";
import { isoNow, newApiKeyId } from "../ids";
import { toPage, type ListPage, type ListParams } from "../pagination";
import type { Actor, KeyType, Role } from "./actor";
import { toApiKey, type ApiKey } from "./api-key";
import { assertMayManage, assertMayMint, keyNotFound, mayManage, type KeyRights } from "./key-authority";
import { generateKey, hashKey, keyPrefix } from "./key-format";
import { PUBLISHABLE_KEY_SCOPES, SCOPES, SECRET_KEY_SCOPES, type Scope } from "./scopes";

export interface NewKeyInput {
  merchantId: string;
  name: string;
  type: KeyType;
  mode: Mode;
  role: Role;
  scopes?: Scope[];
}

const keyRevoked = (id: string) => new ApiError(409, "api_key_revoked", `API key ${id} is revoked and cannot be rotated.`);

const keyEntry = (action: "api_key.created" | "api_key.rotated" | "api_key.revoked", row: Pick<ApiKeyRow, "id" | "merchant_id" | "mode" | "role">) => ({
  action,
  target: { type: "api_key" as const, id: row.id },
  merchantId: row.merchant_id,
  mode: row.mode,
  details: { mode: row.mode, role: row.role },
});

const rightsOf = (row: ApiKeyRow): KeyRights => ({ merchantId: row.merchant_id, mode: row.mode, role: row.role, scopes: JSON.parse(row.scopes) as Scope[] });

/**
 * The scopes a new key gets: checks the shape of the request; whether the creator may
 * grant them is `assertMayMint`'s. Unless named, a secret key gets what its creator
 * holds (everything for the CLI, `creator` undefined).
 */
export function scopesForNewKey(input: Pick<NewKeyInput, "type" | "role" | "scopes">, creator: Actor | undefined): Scope[] {
  if (input.role === "admin") {
    if (input.type !== "secret") throw new ApiError(400, "parameter_invalid", "Admin keys are secret keys.", { param: "type" });
    return [...SCOPES];
  }
  if (input.type === "publishable") {
    if (input.scopes && (input.scopes.length !== 1 || input.scopes[0] !== "tokens:write")) {
      throw new ApiError(400, "parameter_invalid", "Publishable keys hold exactly the tokens:write scope.", { param: "scopes" });
    }
    return [...PUBLISHABLE_KEY_SCOPES];
  }
  if (input.scopes) {
    if (input.scopes.includes("admin")) throw new ApiError(400, "parameter_invalid", "The admin scope comes only with role admin.", { param: "scopes" });
    return [...new Set(input.scopes)];
  }
  return SECRET_KEY_SCOPES.filter((scope) => creator === undefined || creator.scopes.has(scope));
}

/** Creates a key; the plaintext is in the returned object and nowhere else. */
export async function createApiKey(db: Db, input: NewKeyInput, creator: Actor | undefined, by: AuditActor): Promise<ApiKey> {
  const scopes = scopesForNewKey(input, creator);
  assertMayMint(creator, { merchantId: input.merchantId, mode: input.mode, role: input.role, scopes });
  const plaintext = generateKey(input.type, input.mode);
  const row = {
    id: newApiKeyId(),
    merchant_id: input.merchantId,
    name: input.name,
    type: input.type,
    mode: input.mode,
    role: input.role,
    scopes: JSON.stringify(scopes),
    key_hash: hashKey(plaintext),
    key_prefix: keyPrefix(input.type, input.mode),
    last4: plaintext.slice(-4),
    status: "active" as const,
    created_at: isoNow(),
    last_used_at: null,
    revoked_at: null,
  };
  await insertApiKey(db, row);
  await recordAudit(db, by, keyEntry("api_key.created", row));
  return toApiKey(row, plaintext);
}

/** Every key of a merchant, both modes: the CLI's list (the operator sees all). */
export async function listMerchantApiKeys(db: Db, merchantId: string): Promise<ApiKey[]> {
  return (await listApiKeys(db, { merchantId })).map((row) => toApiKey(row));
}

/**
 * The caller's page of keys, newest first: only those it may manage. Hidden keys sit
 * between visible ones, so rows are read in batches until the page is full.
 */
export async function listCallerApiKeys(db: Db, caller: Actor, params: ListParams): Promise<ListPage<ApiKey>> {
  const owner = { merchantId: caller.merchantId, mode: caller.mode };
  let after: ApiKeyRow | undefined;
  if (params.startingAfter !== undefined) {
    after = await findApiKey(db, caller.merchantId, params.startingAfter);
    if (!after || !mayManage(caller, rightsOf(after))) {
      throw new ApiError(400, "parameter_invalid", `starting_after: no API key ${params.startingAfter}.`, { param: "starting_after" });
    }
  }
  const batch = params.limit + 1;
  const visible: ApiKeyRow[] = [];
  for (;;) {
    const rows = await listApiKeys(db, owner, { limit: batch, after });
    visible.push(...rows.filter((row) => mayManage(caller, rightsOf(row))));
    if (visible.length > params.limit || rows.length < batch) break;
    after = rows[rows.length - 1];
  }
  return toPage(visible, params.limit, (row) => toApiKey(row));
}

/**
 * New plaintext for the same id, name and scopes; the old value stops working now.
 * `caller` is the calling key (undefined for the CLI).
 */
export async function rotateApiKey(db: Db, merchantId: string, id: string, caller: Actor | undefined, by: AuditActor): Promise<ApiKey> {
  const row = await findApiKey(db, merchantId, id);
  if (!row) throw keyNotFound(id);
  assertMayManage(caller, id, rightsOf(row));
  if (row.status !== "active") throw keyRevoked(id);
  const plaintext = generateKey(row.type, row.mode);
  const update = { key_hash: hashKey(plaintext), last4: plaintext.slice(-4) };
  if (!(await updateActiveApiKey(db, id, update))) throw keyRevoked(id);
  await endDashboardAccessOfKey(db, id);
  await recordAudit(db, by, keyEntry("api_key.rotated", row));
  return toApiKey({ ...row, ...update }, plaintext);
}

/** Permanently deactivates a key; revoking a revoked key answers its revoked state. */
export async function revokeApiKey(db: Db, merchantId: string, id: string, caller: Actor | undefined, by: AuditActor): Promise<ApiKey> {
  const row = await findApiKey(db, merchantId, id);
  if (!row) throw keyNotFound(id);
  assertMayManage(caller, id, rightsOf(row));
  if (row.status === "revoked") return toApiKey(row);
  const revokedAt = isoNow();
  await updateActiveApiKey(db, id, { status: "revoked", revoked_at: revokedAt });
  await endDashboardAccessOfKey(db, id);
  await recordAudit(db, by, keyEntry("api_key.revoked", row));
  return toApiKey({ ...row, status: "revoked", revoked_at: revokedAt });
}
