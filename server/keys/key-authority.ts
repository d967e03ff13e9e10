import type { Mode } from "../connectors/connector";
import { ApiError } from "../errors";
import type { Actor, Role } from "./actor";
import type { Scope } from "./scopes";

/** What decides whether a key may be managed: its owner, its mode and its rights. */
export interface KeyRights {
  merchantId: string;
  mode: Mode;
  role: Role;
  scopes: readonly Scope[];
}

const forbidden = (message: string) => new ApiError(403, "insufficient_permissions", message);
export const keyNotFound = (id: string) => new ApiError(404, "api_key_not_found", `No API key ${id} for this merchant.`, { param: "id" });

/**
 * The one rule of key management over the API: a calling key creates, lists, rotates
 * and revokes only keys of its own merchant and mode whose rights it holds (a subset
 * of its scopes; role `admin` only with an admin key). Another merchant's or mode's
 * key is "not found", so existence never leaks across those boundaries. The CLI has
 * no calling key: the operator holds the database and keeps full rights.
 */
function isInReach(caller: Actor, key: Pick<KeyRights, "merchantId" | "mode">): boolean {
  return key.merchantId === caller.merchantId && key.mode === caller.mode;
}

function missingRight(caller: Actor, key: Pick<KeyRights, "role" | "scopes">): string | undefined {
  if (key.role === "admin" && caller.role !== "admin") return "Only admin keys can create or manage admin keys.";
  const lacking = key.scopes.find((scope) => !caller.scopes.has(scope));
  return lacking === undefined ? undefined : `The calling key does not hold ${lacking}, so it cannot grant or manage it.`;
}

/** Whether `caller` sees `key` in its list: in reach and within its rights. */
export function mayManage(caller: Actor, key: KeyRights): boolean {
  return isInReach(caller, key) && missingRight(caller, key) === undefined;
}

/** Rotate and revoke: 404 outside the caller's merchant or mode, 403 above its rights. */
export function assertMayManage(caller: Actor | undefined, id: string, key: KeyRights): void {
  if (caller === undefined) return;
  if (!isInReach(caller, key)) throw keyNotFound(id);
  const missing = missingRight(caller, key);
  if (missing !== undefined) throw forbidden(missing);
}

/**
 * Create: the new key's mode must be the caller's and its rights the caller's. Only
 * an admin key (the admin route) mints keys for another merchant.
 */
export function assertMayMint(caller: Actor | undefined, key: KeyRights): void {
  if (caller === undefined) return;
  if (key.merchantId !== caller.merchantId && caller.role !== "admin") throw forbidden("Only admin keys can create another merchant's keys.");
  if (key.mode !== caller.mode) throw forbidden(`A ${caller.mode} key cannot create ${key.mode} keys.`);
  const missing = missingRight(caller, key);
  if (missing !== undefined) throw forbidden(missing);
}
