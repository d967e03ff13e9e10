import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { seedMerchant, type SeededMerchant } from "../support/seed";
import { createEndpoint, emitEvent, sleep } from "./support";

describe("retries, dead letter queue and replay from the CLI", () => {
  let server: TestServer;
  let m: SeededMerchant;
  let r: WebhookReceiver;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s,1s" } });
    m = await seedMerchant(server, "Retry Merchant");
    r = await startWebhookReceiver({ status: 500 });
    await createEndpoint(server, m.secret, { url: r.url, event_types: ["*"] });
  });
  afterAll(async () => {
    await r.close();
    await server.stop();
  });

  const cli = (...args: string[]) => runCli(["webhooks", ...args, "--data", server.dataDir]);
  const hitsOf = (eventId: string) => r.received.filter((hit) => hit.headers["x-service-event-id"] === eventId);
  const deliveryOf = async (eventId: string) => {
    const res = await server.request(`/v1/events/${eventId}`, { headers: { authorization: `Bearer ${m.secret}` } });
    return (await res.json()).deliveries[0];
  };

  it("retries a failing receiver on the schedule, then dead-letters; the CLI replays it to a running server", async () => {
    const first = await emitEvent(server, m.merchant.id, "payment.captured");
    const second = await emitEvent(server, m.merchant.id, "payment.failed");

    await r.waitUntil(() => hitsOf(first.id).length === 6 && hitsOf(second.id).length === 6, 15_000);
    const times = hitsOf(first.id).map((hit) => hit.receivedAt);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(gap).toBeLessThan(3500);
    }
    await sleep(2500);
    expect(hitsOf(first.id)).toHaveLength(6);
    expect(hitsOf(second.id)).toHaveLength(6);

    const dead = await deliveryOf(first.id);
    expect(dead).toMatchObject({ status: "dead", attempts: 6, next_attempt_at: null });
    expect(dead.attempts_log).toHaveLength(6);
    for (const attempt of dead.attempts_log) expect(attempt).toMatchObject({ status_code: 500, error: null, response_excerpt: "receiver says 500" });

    const listed = await cli("list", "--dead", "--json");
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout).data;
    expect(rows.map((row: { event_id: string }) => row.event_id).sort()).toEqual([first.id, second.id].sort());
    expect(rows[0]).toMatchObject({ type: expect.stringMatching(/^payment\./), endpoint_url: r.url, status: "dead", attempts: 6, next_attempt_at: null });
    expect(rows[0]).toMatchObject({ merchant: m.merchant.short_id, last_status_code: 500, last_error: null });
    const table = await cli("list");
    expect(table.stdout).toMatch(/^ID\s+MERCHANT\s+EVENT_ID\s+TYPE\s+ENDPOINT_URL\s+STATUS\s+ATTEMPTS\s+LAST_STATUS_CODE\s+LAST_ERROR\s+NEXT_ATTEMPT_AT/);
    expect(table.stdout).toContain(first.id);

    r.answer(200);
    const replayed = await cli("replay", first.id, "--json");
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout).data).toEqual([{ id: dead.id, event_id: first.id, endpoint_id: dead.endpoint_id }]);
    await r.waitUntil(() => hitsOf(first.id).length === 7, 3000);
    expect(hitsOf(first.id).at(-1)?.answeredWith).toBe(200);
    await expect.poll(async () => (await deliveryOf(first.id)).status).toBe("succeeded");
    expect(hitsOf(second.id)).toHaveLength(6);

    const sinceLater = await cli("replay", "--dead", "--since", new Date(Date.now() + 60_000).toISOString(), "--json");
    expect(JSON.parse(sinceLater.stdout).data).toEqual([]);
    const all = await cli("replay", "--dead", "--since", new Date(Date.now() - 60_000).toISOString());
    expect(all.code).toBe(0);
    expect(all.stderr).toContain("1 deliveries queued");
    await r.waitUntil(() => hitsOf(second.id).length === 7, 3000);
    await expect.poll(async () => (await deliveryOf(second.id)).status).toBe("succeeded");
    expect((await cli("list", "--dead", "--json")).stdout).not.toContain('"dead"');
  });

  it("refuses a bad replay invocation", async () => {
    expect((await cli("replay")).code).toBe(2);
    expect((await cli("replay", "evt_x", "--dead")).code).toBe(2);
    expect((await cli("replay", "evt_x", "--since", "2026-01-01T00:00:00Z")).code).toBe(2);
    expect((await cli("replay", "--dead", "--since", "yesterday")).code).toBe(2);
    const missing = await cli("replay", "evt_doesnotexist");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No event evt_doesnotexist");
  });
});
