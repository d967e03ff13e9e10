import { z } from "zod";
import type { ApiKeyRow } from "../../store/schema";
import type { Mode } from "../connectors/connector";
import type { KeyType, Role } from "./actor";
import { SCOPES, type Scope } from "./scopes";
import { timestamp } from "../ids";

/** An API key as the API and the CLI show it. `key` (the plaintext) only on create and rotate. */
export const apiKeySchema = z.object({
  id: z.string(),
  object: z.literal("api_key"),
  name: z.string(),
  type: z.enum(["secret", "publishable"]),
  mode: z.enum(["test", "live"]),
  role: z.enum(["merchant", "admin"]),
  scopes: z.array(z.enum(SCOPES)),
  key_prefix: z.string(),
  last4: z.string(),
  status: z.enum(["active", "revoked"]),
  created_at: timestamp,
  last_used_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
  key: z.string().optional().meta({ description: "The key in plaintext: only in the create and rotate answers, never again." }),
}).meta({ id: "ApiKey" }) satisfies z.ZodType<{ type: KeyType; mode: Mode; role: Role; scopes: Scope[] }>;
export type ApiKey = z.infer<typeof apiKeySchema>;

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
