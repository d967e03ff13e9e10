/**
 * The dispatcher leases and settles deliveries in batches; these drive the store's
 * batch functions on rows no dispatcher touches (their endpoint is disabled) to check
 * that a batch keeps each delivery's compare-and-set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newAttemptId, newWebhookEndpointId } from "../../server/ids";
import { newPendingDelivery } from "../../server/webhooks/enqueue";
import { insertDeliveries, insertEndpoint, leaseDeliveries, requeueDeliveries, settleLeasedDeliveries, type DueDelivery, type LeasedOutcome } from "../../store/webhooks";
import { bootServer, type TestServer } from "../support/harness";
import { seedMerchant, type SeededMerchant } from "../support/seed";
import { writeEvent } from "./support";

describe("batched leases and outcomes", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server, "Batch Merchant");
  });
  afterAll(async () => {
    await server.stop();
  });

  async function deliveries(count: number): Promise<string[]> {
    const now = new Date();
    const endpointId = newWebhookEndpointId();
    await insertEndpoint(server.app.db, {
      id: endpointId,
      merchant_id: m.merchant.id,
      mode: "test",
      url: "http://127.0.0.1:9/unused",
      event_types: JSON.stringify(["*"]),
      description: null,
      status: "disabled",
      secret_encrypted: "not-used",
      previous_secret_encrypted: null,
      previous_secret_expires_at: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      deleted_at: null,
    });
    const event = await writeEvent(server.app.db, m.merchant.id, "payment.captured");
    const rows = Array.from({ length: count }, () => newPendingDelivery(event.id, endpointId, now));
    await insertDeliveries(server.app.db, rows);
    return rows.map((row) => row.id);
  }

  const lease = (ids: string[], now: number, until: number) => server.app.writes.run((trx) => leaseDeliveries(trx, ids, now, until));
  const row = (id: string) => server.app.db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const delivered = (delivery: DueDelivery, leasedUntil: number): LeasedOutcome => ({
    lease: { id: delivery.id, leasedUntil, attempts: delivery.attempts },
    attempt: { id: newAttemptId(), delivery_id: delivery.id, attempted_at: new Date().toISOString(), status_code: 200, duration_ms: 1, error: null, response_excerpt: "ok" },
    update: { status: "succeeded", attempts: delivery.attempts + 1, retryDelayMs: null },
  });

  it("leases only rows nobody holds, and returns them with their payload and endpoint", async () => {
    const ids = await deliveries(3);
    const now = Date.now();
    const first = await lease(ids.slice(0, 2), now, now + 60_000);
    expect(first.map((d) => d.id).sort()).toEqual(ids.slice(0, 2).sort());
    expect(JSON.parse(first[0]?.payload ?? "{}").type).toBe("payment.captured");
    expect(first[0]?.url).toBe("http://127.0.0.1:9/unused");
    // Another sender asking for all three wins only the one not yet leased.
    const second = await lease(ids, now, now + 60_000);
    expect(second.map((d) => d.id)).toEqual([ids[2]]);
  });

  it("records every attempt, applies each outcome, and gives back the lease of a row replayed meanwhile", async () => {
    const ids = await deliveries(3);
    const now = Date.now();
    const until = now + 60_000;
    const leased = await lease(ids, now, until);
    expect(leased).toHaveLength(3);
    // A failed first attempt leaves a delivery pending with attempts = 1; lease them again.
    const failedAt = Date.now();
    const failed = leased.map((d): LeasedOutcome => ({ ...delivered(d, until), update: { status: "pending", attempts: 1, retryDelayMs: 0 } }));
    expect(await server.app.writes.run((trx) => settleLeasedDeliveries(trx, failed, failedAt))).toEqual([true, true, true]);
    const again = await lease(ids, Date.now(), until + 1);
    expect(again).toHaveLength(3);
    const replayed = ids[1] as string;
    // The replay resets attempts under the lease: that outcome must not be applied.
    await requeueDeliveries(server.app.db, [replayed], Date.now(), new Date().toISOString());

    const byId = new Map(again.map((d) => [d.id, d]));
    const outcomes = ids.map((id) => delivered(byId.get(id) as DueDelivery, until + 1));
    const applied = await server.app.writes.run((trx) => settleLeasedDeliveries(trx, outcomes, Date.now()));

    expect(applied).toEqual([true, false, true]);
    for (const id of [ids[0], ids[2]] as string[]) expect(await row(id)).toMatchObject({ status: "succeeded", attempts: 2, next_attempt_at: null, leased_until: null });
    expect(await row(replayed)).toMatchObject({ status: "pending", attempts: 0, leased_until: null });
    const attempts = await server.app.db.selectFrom("webhook_attempts").select("delivery_id").where("delivery_id", "in", ids).execute();
    expect(attempts).toHaveLength(6);
  });

  it("a pending outcome is due again its retry delay after it is written", async () => {
    const [id] = await deliveries(1);
    const now = Date.now();
    const [leased] = await lease([id as string], now, now + 60_000);
    const writtenAt = now + 5;
    const outcome: LeasedOutcome = { ...delivered(leased as DueDelivery, now + 60_000), update: { status: "pending", attempts: 1, retryDelayMs: 30_000 } };
    expect(await server.app.writes.run((trx) => settleLeasedDeliveries(trx, [outcome], writtenAt))).toEqual([true]);
    expect(await row(id as string)).toMatchObject({ status: "pending", attempts: 1, next_attempt_at: writtenAt + 30_000, leased_until: null, updated_at: new Date(writtenAt).toISOString() });
  });
});
