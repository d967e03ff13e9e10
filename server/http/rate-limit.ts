import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import type { Actor } from "../keys/actor";

/** Token bucket per API key (CONTRACT §8); 429 with `Retry-After` in whole seconds. */
export function enforceRateLimit(app: AppContext, actor: Actor): void {
  const limit = app.config.rateLimit;
  if (!limit || actor.apiKeyId === "") return;
  const waitMs = app.cache.takeToken(`rate:${actor.apiKeyId}`, limit.perSecond, limit.burst);
  if (waitMs > 0) {
    const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)));
    throw new ApiError(429, "rate_limit_exceeded", `Too many requests. Retry after ${seconds} s, backing off exponentially.`, {
      headers: { "retry-after": seconds },
    });
  }
}
