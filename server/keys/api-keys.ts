import { findApiKey, insertApiKey, listApiKeys, updateActiveApiKey } from "../../store/api-keys";
import type { Db } from "../../store/database";
import type { Mode } from "../connectors/connector";
import { ApiError } from "../errors";
import { isoNow, newApiKeyId } from "../ids";
import type { Actor, KeyType, Role } from "./actor";
import { toApiKey, type ApiKey } from "./api-key";
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

const forbidden = (message: string) => new ApiError(403, "insufficient_permissions", message);
const keyNotFound = (id: string) => new ApiError(404, "api_key_not_found", `No API key ${id} for this merchant.`, { param: "id" });
const keyRevoked = (id: string) => new ApiError(409, "api_key_revoked", `API key ${id} is revoked and cannot be rotated.`);

/**
 * The scopes a new key gets. `creator` is the calling key, or `undefined` for the
 * CLI (an operator with the database in hand). A key never grants what it lacks.
 */
export function scopesForNewKey(input: Pick<NewKeyInput, "type" | "role" | "scopes">, creator: Actor | undefined): Scope[] {
  const holds = (scope: Scope) => creator === undefined || creator.scopes.has(scope);
  if (input.role === "admin") {
    if (input.type !== "secret") throw new ApiError(400, "parameter_invalid", "Admin keys are secret keys.", { param: "type" });
    if (creator && creator.role !== "admin") throw forbidden("Only admin keys can create admin keys.");
    return [...SCOPES];
  }
  if (input.type === "publishable") {
    if (input.scopes && (input.scopes.length !== 1 || input.scopes[0] !== "tokens:write")) {
      throw new ApiError(400, "parameter_invalid", "Publishable keys hold exactly the tokens:write scope.", { param: "scopes" });
    }
    if (!holds("tokens:write")) throw forbidden("The calling key does not hold tokens:write.");
    return [...PUBLISHABLE_KEY_SCOPES];
  }
  if (input.scopes) {
    const admin = input.scopes.find((s) => s === "admin");
    if (admin) throw new ApiError(400, "parameter_invalid", "The admin scope comes only with role admin.", { param: "scopes" });
    const lacking = input.scopes.find((s) => !holds(s));
    if (lacking) throw forbidden(`The calling key does not hold ${lacking}, so it cannot grant it.`);
    return [...new Set(input.scopes)];
  }
  return SECRET_KEY_SCOPES.filter(holds);
}

/** Creates a key; the plaintext is in the returned object and nowhere else. */
export async function createApiKey(db: Db, input: NewKeyInput, creator: Actor | undefined): Promise<ApiKey> {
  const scopes = scopesForNewKey(input, creator);
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
  return toApiKey(row, plaintext);
}

export async function listMerchantApiKeys(db: Db, merchantId: string): Promise<ApiKey[]> {
  return (await listApiKeys(db, merchantId)).map((row) => toApiKey(row));
}

/** New plaintext for the same id, name and scopes; the old value stops working now. */
export async function rotateApiKey(db: Db, merchantId: string, id: string): Promise<ApiKey> {
  const row = await findApiKey(db, merchantId, id);
  if (!row) throw keyNotFound(id);
  if (row.status !== "active") throw keyRevoked(id);
  const plaintext = generateKey(row.type, row.mode);
  const update = { key_hash: hashKey(plaintext), last4: plaintext.slice(-4) };
  if (!(await updateActiveApiKey(db, id, update))) throw keyRevoked(id);
  return toApiKey({ ...row, ...update }, plaintext);
}

/** Permanently deactivates a key; revoking a revoked key answers its revoked state. */
export async function revokeApiKey(db: Db, merchantId: string, id: string): Promise<ApiKey> {
  const row = await findApiKey(db, merchantId, id);
  if (!row) throw keyNotFound(id);
  if (row.status === "revoked") return toApiKey(row);
  const revokedAt = isoNow();
  await updateActiveApiKey(db, id, { status: "revoked", revoked_at: revokedAt });
  return toApiKey({ ...row, status: "revoked", revoked_at: revokedAt });
}
