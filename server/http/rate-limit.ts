import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import type { Actor } from "../keys/actor";

/**
 * Token bucket per API key (CONTRACT §8); 429 with `Retry-After` in whole seconds.
 * The limit is the deployment's: each of N live instances keeps its bucket in memory
 * and holds 1/N of the rate and burst, so behind a load balancer that spreads a key's
 * requests the instances together allow the configured limit.
 */
export function enforceRateLimit(app: AppContext, actor: Actor): void {
  const limit = app.config.rateLimit;
  if (!limit || actor.apiKeyId === "") return;
  const share = app.instances.live();
  const waitMs = app.cache.takeToken(`rate:${actor.apiKeyId}`, limit.perSecond / share, Math.max(1, limit.burst / share));
  if (waitMs > 0) {
    const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)));
    throw new ApiError(429, "rate_limit_exceeded", `Too many requests. Retry after ${seconds} s, backing off exponentially.`, {
      headers: { "retry-after": seconds },
    });
  }
}
