import { createHmac } from "node:crypto";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  refreshIdempotencyLock,
  releaseIdempotencyKey,
  settledClaim,
  type IdempotencyScope,
  type StoredResponse,
} from "../../store/idempotency";
import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import type { UnitOfWork } from "../unit-of-work";
import { canonicalJson } from "./canonical-json";

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Which answers are kept for replay (CONTRACT §3): every answer produced after
 * authentication and validation, declines included. Not kept, so the same key can be
 * retried: 400 (fixable input), 401/403, 413, 422, 429 and 5xx. A decline (502) is
 * kept because it is committed with its failed payment (`committed`); a 502 or 504
 * thrown before anything was written (processor error, timeout) re-asks the
 * processor with the same processor-side key on retry. An answer with `Retry-After`
 * ("try again later", e.g. a payment busy with another follow-on) is not kept either:
 * replaying it forever would contradict it. Nor is 409 `idempotency_key_reused`, the
 * answer to a key whose record expired: it is read from the payment or refund itself,
 * which never goes away, and kept it would tie the key to whichever request came
 * first, so the original parameters would then get a 422 mismatch instead.
 */
export function isStorable(status: number, code: string | undefined, committed: boolean, headers: Readonly<Record<string, string>> = {}): boolean {
  if (code === "idempotency_conflict" || code === "idempotency_key_reused" || headers["retry-after"] !== undefined) return false;
  return status < 400 || status === 404 || status === 409 || (committed && status === 502);
}

/**
 * The path an Idempotency-Key is scoped to: the route's pattern with its (decoded)
 * params, so `/v1/payments/sale/` or a percent-encoded variant of a path shares the
 * scope of the canonical path.
 */
export function scopePath(pattern: string, params: Readonly<Record<string, string>>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}

/** The HKDF label of the fingerprint key; a new label would re-key every fingerprint. */
export const FINGERPRINT_KEY_LABEL = "paygate idempotency fingerprint v1";

/**
 * What tells a replay from a reuse of the key with other parameters. Keyed (HMAC with a
 * key derived from the master key): an unkeyed digest of a tokenization body would let
 * anyone holding the database brute-force the PAN and CVC from the stored BIN, last4
 * and expiry.
 */
export function fingerprint(key: Buffer, method: string, path: string, body: unknown, connectorAccountHeader: string | null): string {
  return createHmac("sha256", key)
    .update(`${method}\n${path}\n${canonicalJson(body)}\n${connectorAccountHeader ?? ""}`)
    .digest("hex");
}

/** The header's value, or the 400 the contract names. */
export function idempotencyKeyFrom(headers: Headers): string {
  const key = headers.get("idempotency-key");
  if (key === null || key === "") {
    throw new ApiError(400, "missing_idempotency_key", "This request needs an Idempotency-Key header (any unique string up to 255 characters).");
  }
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError(400, "parameter_invalid", "Idempotency-Key must be 1 to 255 printable ASCII characters.", { param: "Idempotency-Key" });
  }
  return key;
}

export type Begin = { replay: StoredResponse } | { session: IdempotencySession };

/**
 * One request's hold on its Idempotency-Key. `unit` commits the business writes and
 * the answer in the same transaction; `finish` keeps or releases the key for answers
 * that did not go through `unit`. While the request runs, the lock is refreshed every
 * third of the lock timeout, so a slow request (a long processor call, a follow-on
 * waiting for another) is never taken over by a retry.
 */
export class IdempotencySession {
  private recorded = false;
  private lockedAt: number;
  private readonly refresher: NodeJS.Timeout;
  private refreshing: Promise<void> = Promise.resolve();
  /** The answer rendered for the committed value: the one to send, as it was stored. */
  committedReply: StoredResponse | undefined;

  constructor(
    private readonly app: AppContext,
    private readonly scope: IdempotencyScope,
    lockedAt: number,
  ) {
    this.lockedAt = lockedAt;
    this.refresher = setInterval(() => {
      this.refreshing = this.refreshing.then(() => this.refresh());
    }, app.config.idempotencyLockTimeoutMs / 3);
    this.refresher.unref();
  }

  /**
   * Moves `lockedAt` inside the write, so a commit queued behind it in the same group
   * already compares against the new value; undone if the group does not commit.
   */
  private async refresh(): Promise<void> {
    const held = this.lockedAt;
    const now = Math.max(Date.now(), held + 1);
    try {
      await this.app.writes.run(async (trx) => {
        if (await refreshIdempotencyLock(trx, this.scope, held, now, this.app.config.idempotencyLockTimeoutMs)) this.lockedAt = now;
      });
    } catch (error) {
      if (this.lockedAt === now) this.lockedAt = held;
      this.app.log.warn({ err: error }, "could not refresh an idempotency lock");
    }
  }

  /**
   * `render` turns the committed value into the answer that will be sent; `strip`
   * gives what of it may be stored (no secrets).
   */
  unit(render: (value: unknown) => StoredResponse, strip: (reply: StoredResponse) => StoredResponse): UnitOfWork {
    return {
      commit: async (fn) => {
        let reply: StoredResponse | undefined;
        let stored = false;
        const value = await this.app.writes.run(async (trx) => {
          const committed = await fn(trx);
          reply = render(committed);
          const kept = strip(reply);
          if (isStorable(kept.status, undefined, true, kept.headers)) {
            if (!(await completeIdempotencyKey(trx, this.scope, this.lockedAt, kept))) {
              throw new ApiError(409, "idempotency_conflict", "This Idempotency-Key was taken over by another request; nothing was changed.");
            }
            stored = true;
          }
          return committed;
        });
        this.recorded = stored;
        this.committedReply = reply;
        return value;
      },
    };
  }

  async finish(response: StoredResponse, code?: string): Promise<void> {
    clearInterval(this.refresher);
    await this.refreshing;
    if (this.recorded) return;
    if (isStorable(response.status, code, false, response.headers)) {
      await this.app.writes.run((trx) => completeIdempotencyKey(trx, this.scope, this.lockedAt, response));
    } else {
      await this.app.writes.run((trx) => releaseIdempotencyKey(trx, this.scope, this.lockedAt, response.status >= 500));
    }
  }
}

export async function beginIdempotent(app: AppContext, scope: IdempotencyScope, print: string): Promise<Begin> {
  // A replay or a mismatch is answered from a read, without waiting for a commit.
  const claim =
    (await settledClaim(app.db, scope, print, Date.now())) ??
    (await app.writes.run((trx) => claimIdempotencyKey(trx, scope, print, Date.now(), app.config.idempotencyTtlMs, app.config.idempotencyLockTimeoutMs)));
  switch (claim.kind) {
    case "replay":
      return { replay: claim.response };
    case "mismatch":
      throw new ApiError(422, "idempotency_param_mismatch", "This Idempotency-Key was already used with different parameters.");
    case "in_flight":
      throw new ApiError(409, "idempotency_conflict", "A request with this Idempotency-Key is still in progress. Retry later.");
    case "acquired":
      return { session: new IdempotencySession(app, scope, claim.lockedAt) };
  }
}
