/**
 * A payment's events keep their order whichever instance writes them: each sorts after
 * the payment's previous event as stored, not after this process's clock and counter.
 * The earlier event is written straight into the database as an instance whose clock
 * runs a minute ahead (and whose per-millisecond counter is at 5) would have.
 */
import { describe, expect, it } from "vitest";
import { newEventId, sortableIdTime } from "../../server/ids";
import { bootServer } from "../support/harness";
import { auth } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

/** An event id as a process `aheadMs` in the future, at per-millisecond counter `counter`, would make it. */
const idFromElsewhere = (aheadMs: number, counter: number): string =>
  `evt_${(Date.now() + aheadMs).toString(36).padStart(9, "0")}${counter.toString(36).padStart(4, "0")}${"x".repeat(11)}`;

describe("event order across instances", () => {
  it("an id made after another process's id sorts after it, at that id's time or later", () => {
    const ahead = idFromElsewhere(60_000, 5);
    const next = newEventId(ahead);
    expect(next > ahead).toBe(true);
    expect(sortableIdTime("evt_", next)).toBe(sortableIdTime("evt_", ahead));
    // Placed ahead once: the next ids keep this clock's time.
    expect(sortableIdTime("evt_", newEventId()) < sortableIdTime("evt_", ahead)).toBe(true);
    const behind = idFromElsewhere(-60_000, 5);
    const fresh = newEventId(behind);
    expect(fresh > behind && fresh < newEventId()).toBe(true);
  });

  it("a capture's event lists after the authorization another instance wrote with a clock ahead", async () => {
    const server = await bootServer();
    try {
      const m = await seedSandboxMerchant(server);
      const client = paymentsClient(server, m.secret);
      const authorized = await (await client.authorize({ amount: 1000, gateway_token: await client.token(), capture_method: "manual" })).json();
      const stored = await server.app.db.selectFrom("events").selectAll().where("payment_id", "=", authorized.id).executeTakeFirstOrThrow();
      const elsewhere = idFromElsewhere(60_000, 5);
      const payload = JSON.stringify({ ...JSON.parse(stored.payload), id: elsewhere, created_at: sortableIdTime("evt_", elsewhere) });
      await server.app.db.deleteFrom("webhook_deliveries").where("event_id", "=", stored.id).execute();
      await server.app.db
        .updateTable("events")
        .set({ id: elsewhere, payload, created_at: sortableIdTime("evt_", elsewhere) })
        .where("id", "=", stored.id)
        .execute();

      expect((await client.capture({ payment_id: authorized.id })).status).toBe(200);
      const events = (await (await server.request("/v1/events", { headers: auth(m.secret) })).json()).data as Array<{ id: string; type: string; created_at: string }>;
      expect(events.map((e) => e.type)).toEqual(["payment.captured", "payment.authorized"]);
      const [captured] = events;
      expect((captured?.id ?? "") > elsewhere).toBe(true);
      expect(captured?.created_at).toBe(sortableIdTime("evt_", captured?.id as string));
    } finally {
      await server.stop();
    }
  });
});
