import type { ApiKeyRow } from "../../store/schema";
import type { Mode } from "../connectors/connector";
import type { KeyType, Role } from "./actor";
import type { Scope } from "./scopes";

/** An API key as the API and the CLI show it. `key` (the plaintext) only on create and rotate. */
export interface ApiKey {
  id: string;
  object: "api_key";
  name: string;
  type: KeyType;
  mode: Mode;
  role: Role;
  scopes: Scope[];
  key_prefix: string;
  last4: string;
  status: "active" | "revoked";
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}

export function toApiKey(row: ApiKeyRow, plaintext?: string): ApiKey {
  return {
    id: row.id,
    object: "api_key",
    name: row.name,
    type: row.type,
    mode: row.mode,
    role: row.role,
    scopes: JSON.parse(row.scopes) as Scope[],
    key_prefix: row.key_prefix,
    last4: row.last4,
    status: row.status,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
    ...(plaintext !== undefined && { key: plaintext }),
  };
}
