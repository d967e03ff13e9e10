/** Every scope a key can hold (CONTRACT §2). `admin` is held only by admin keys. */
export const SCOPES = [
  "tokens:write",
  "payments:read",
  "payments:write",
  "webhooks:read",
  "webhooks:write",
  "keys:read",
  "keys:write",
  "routing:write",
  "admin",
] as const;

export type Scope = (typeof SCOPES)[number];

/** What a secret key holds unless created with fewer. */
export const SECRET_KEY_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== "admin");
/** Publishable keys only tokenize. */
export const PUBLISHABLE_KEY_SCOPES: readonly Scope[] = ["tokens:write"];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
