/**
 * Three `serve` processes on one PostgreSQL database all run the webhook dispatcher:
 * each delivery is leased in the database before it is sent, so a real local receiver
 * gets every one of 1,000 events exactly once, none from two dispatchers, none lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { writeEvent } from "../webhooks/support";
import { ON_POSTGRES, startDeployment, type Deployment } from "./deployment";

const EVENTS = 1_000;

describe.runIf(ON_POSTGRES)("webhook delivery by three instances", () => {
  let deployment: Deployment;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    deployment = await startDeployment();
    const created = await runCli(
      ["endpoints", "create", "--merchant", deployment.merchantShortId, "--mode", "test", "--url", receiver.url, "--events", "*", "--json"],
      { env: deployment.env },
    );
    expect(created.code, created.stderr).toBe(0);
  }, 90_000);

  afterAll(async () => {
    await deployment?.close();
    await receiver?.close();
  });

  it(`${EVENTS} events, each delivered exactly once`, async () => {
    const merchant = await deployment.db.selectFrom("merchants").select("id").where("short_id", "=", deployment.merchantShortId).executeTakeFirstOrThrow();
    const written: string[] = [];
    // Written while the three dispatchers run, in concurrent batches as busy traffic would.
    for (let batch = 0; batch < EVENTS / 50; batch++) {
      const events = await Promise.all(Array.from({ length: 50 }, () => writeEvent(deployment.db, merchant.id, "payment.captured")));
      written.push(...events.map((e) => e.id));
    }
    await receiver.waitUntil((received) => new Set(received.map((r) => JSON.parse(r.raw).id)).size >= EVENTS, 120_000);
    // A duplicate would come from a second dispatcher sending a row another one leased: give it time to show.
    await new Promise((r) => setTimeout(r, 2_000));
    const ids = receiver.received.map((r) => JSON.parse(r.raw).id as string);
    expect(new Set(ids)).toEqual(new Set(written));
    expect(ids).toHaveLength(EVENTS);
    const attempts = await deployment.db.selectFrom("webhook_attempts").select("delivery_id").execute();
    expect(attempts).toHaveLength(EVENTS);
    const pending = await deployment.db.selectFrom("webhook_deliveries").select("id").where("status", "!=", "succeeded").execute();
    expect(pending).toHaveLength(0);
  }, 180_000);
});
