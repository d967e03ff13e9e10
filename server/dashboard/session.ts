import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chooseMerchant, deleteIdleSessions, deleteSession, findApiKeyById, findSession, insertSession, insertSignInToken, spendSignInToken, touchSession } from "../../store/dashboard-sessions";
import type { AppContext } from "../app-context";
import { actorOf } from "../keys/authenticator";
import type { Actor } from "../keys/actor";

/** A session unused this long is over. */
export const IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** How long a one-time sign-in link stays usable. */
export const SIGN_IN_TOKEN_TTL_MS = 10 * 60 * 1000;
/** `last_seen_at` is written at most this often per session: most page views do not write. */
const TOUCH_EVERY_MS = 60 * 1000;

const SESSION_KEY_LABEL = "paygate dashboard session v1";

/** A signed-in session as a request sees it: the key's rights read afresh, never kept. */
export interface DashboardSession {
  id: string;
  actor: Actor;
  csrfToken: string;
  /**
   * The merchant (UUID) whose admin pages an admin session acts on, when it chose one
   * other than its key's own. Never set for a session whose key lacks the admin scope.
   */
  chosenMerchantId?: string;
}

const newToken = (): string => randomBytes(32).toString("base64url");

/**
 * Tokens (cookie, sign-in link) are stored as an HMAC under a key derived from the
 * master key: a copy of the database alone cannot be turned into a session.
 */
function tokenId(app: AppContext, token: string): string {
  return createHmac("sha256", app.cipher.deriveKey(SESSION_KEY_LABEL)).update(token).digest("hex");
}

/** Opens a session for a key; answers the cookie's token, which only the browser keeps. */
export async function openSession(app: AppContext, actor: Actor): Promise<string> {
  const token = newToken();
  const now = Date.now();
  await deleteIdleSessions(app.db, now - IDLE_TIMEOUT_MS);
  await insertSession(app.db, { id: tokenId(app, token), api_key_id: actor.apiKeyId, csrf_token: newToken(), created_at: now, last_seen_at: now });
  return token;
}

/**
 * The session of a cookie token, or undefined when there is none, it sat idle too
 * long, or its key is no longer active (a revoked or rotated key ends its sessions).
 */
export async function loadSession(app: AppContext, token: string | undefined): Promise<DashboardSession | undefined> {
  if (!token) return undefined;
  const id = tokenId(app, token);
  const row = await findSession(app.db, id);
  if (!row) return undefined;
  const now = Date.now();
  const key = await findApiKeyById(app.db, row.api_key_id);
  if (row.last_seen_at + IDLE_TIMEOUT_MS <= now || !key || key.status !== "active") {
    await deleteSession(app.db, id);
    return undefined;
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) await touchSession(app.db, id, now);
  const actor = actorOf(key);
  const chosen = actor.scopes.has("admin") && row.chosen_merchant_id !== null && row.chosen_merchant_id !== actor.merchantId ? row.chosen_merchant_id : undefined;
  return { id, actor, csrfToken: row.csrf_token, ...(chosen && { chosenMerchantId: chosen }) };
}

/** Remembers an admin session's chosen merchant (a UUID the admin API answered for); null goes back to the key's own. */
export async function setChosenMerchant(app: AppContext, session: DashboardSession, merchantId: string | null): Promise<void> {
  await chooseMerchant(app.db, session.id, merchantId);
}

export async function endSession(app: AppContext, session: DashboardSession): Promise<void> {
  await deleteSession(app.db, session.id);
}

/** A one-time sign-in link's token for `apiKeyId` (the sandbox prints it). */
export async function issueSignInToken(app: AppContext, apiKeyId: string): Promise<string> {
  const token = newToken();
  await insertSignInToken(app.db, { id: tokenId(app, token), api_key_id: apiKeyId, expires_at: Date.now() + SIGN_IN_TOKEN_TTL_MS });
  return token;
}

/** The active key a sign-in token was issued for, spending the token; undefined if spent, expired or unknown. */
export async function redeemSignInToken(app: AppContext, token: string): Promise<Actor | undefined> {
  const keyId = await spendSignInToken(app.db, tokenId(app, token), Date.now());
  if (!keyId) return undefined;
  const key = await findApiKeyById(app.db, keyId);
  return key && key.status === "active" ? actorOf(key) : undefined;
}

export function csrfMatches(session: DashboardSession, presented: string | undefined | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
