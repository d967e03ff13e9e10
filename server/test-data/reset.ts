import { sql } from "kysely";
import { z } from "zod";
import type { Trx } from "../../store/database";
import { ApiError } from "../errors";
import type { Route } from "../http/route";
import type { Actor } from "../keys/actor";

/** How many rows of each kind a reset deleted. */
export const resetResultSchema = z
  .object({
    object: z.literal("test_data_reset"),
    merchant: z.string(),
    deleted: z.object({
      payments: z.number().int(),
      refunds: z.number().int(),
      card_tokens: z.number().int(),
      events: z.number().int(),
      webhook_deliveries: z.number().int(),
      webhook_attempts: z.number().int(),
      idempotency_keys: z.number().int(),
    }),
  })
  .meta({ id: "TestDataReset" });
export type ResetResult = z.infer<typeof resetResultSchema>;

const count = (result: { numDeletedRows: bigint }): number => Number(result.numDeletedRows);

/**
 * The routes whose idempotency records a reset deletes, as (method, path pattern): those
 * declared `resetWithTestData` in the route table, the routes that make what a reset
 * deletes. Every other record stays: replaying a key creation after a reset must
 * replay it, not mint a second key.
 */
export function resetScopes(routes: readonly Route[]): Array<{ method: string; path: string }> {
  return routes.filter((r) => r.resetWithTestData).map(({ method, path }) => ({ method, path }));
}

/**
 * A route pattern as a LIKE pattern (escape character `!`) over the paths idempotency
 * records hold: each `:param` was filled in percent-encoded (http/idempotency.ts
 * `scopePath`), so it never holds a `/`; the literal parts are escaped.
 */
function likePattern(pattern: string): string {
  return pattern
    .split(/:\w+/)
    .map((part) => part.replace(/[!%_]/g, (c) => `!${c}`))
    .join("%");
}

/**
 * Deletes the merchant's test-mode payments, refunds, card tokens, events, webhook
 * deliveries and attempts, and its test keys' idempotency records of the routes that
 * made them (`routes`: the route table, see `resetScopes`), in the caller's
 * transaction. Live data, keys, accounts, endpoints, routing and every other
 * idempotency record stay: a CI run gets a clean slate without re-provisioning.
 */
export async function resetTestData(trx: Trx, merchantId: string, routes: readonly Route[]): Promise<ResetResult> {
  const testEvents = trx.selectFrom("events").select("id").where("merchant_id", "=", merchantId).where("mode", "=", "test");
  const testDeliveries = trx.selectFrom("webhook_deliveries").select("id").where("event_id", "in", testEvents);
  const testPayments = trx.selectFrom("payments").select("id").where("merchant_id", "=", merchantId).where("mode", "=", "test");
  const testKeys = trx.selectFrom("api_keys").select("id").where("merchant_id", "=", merchantId).where("mode", "=", "test");
  const scopes = resetScopes(routes);

  const webhook_attempts = count(await trx.deleteFrom("webhook_attempts").where("delivery_id", "in", testDeliveries).executeTakeFirst());
  const webhook_deliveries = count(await trx.deleteFrom("webhook_deliveries").where("event_id", "in", testEvents).executeTakeFirst());
  const events = count(await trx.deleteFrom("events").where("merchant_id", "=", merchantId).where("mode", "=", "test").executeTakeFirst());
  const refunds = count(await trx.deleteFrom("refunds").where("payment_id", "in", testPayments).executeTakeFirst());
  const payments = count(await trx.deleteFrom("payments").where("merchant_id", "=", merchantId).where("mode", "=", "test").executeTakeFirst());
  const card_tokens = count(await trx.deleteFrom("card_tokens").where("merchant_id", "=", merchantId).where("mode", "=", "test").executeTakeFirst());
  const idempotency_keys =
    scopes.length === 0
      ? 0
      : count(
          await trx
            .deleteFrom("idempotency_keys")
            .where("api_key_id", "in", testKeys)
            .where((eb) =>
              eb.or(
                scopes.map(({ method, path }) =>
                  eb.and([eb("method", "=", method), path.includes(":") ? sql<boolean>`${eb.ref("path")} like ${likePattern(path)} escape '!'` : eb("path", "=", path)]),
                ),
              ),
            )
            .executeTakeFirst(),
        );
  return {
    object: "test_data_reset",
    merchant: merchantId,
    deleted: { payments, refunds, card_tokens, events, webhook_deliveries, webhook_attempts, idempotency_keys },
  };
}

/** Over HTTP only a test secret key may reset, and only its own merchant's test data. */
export function assertMayReset(actor: Actor): void {
  if (actor.mode !== "test" || actor.keyType !== "secret") {
    throw new ApiError(403, "insufficient_permissions", "Only a test-mode secret key can reset test data.");
  }
}
