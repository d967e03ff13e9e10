import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMerchant } from "../../server/merchants/merchants";
import { Cipher } from "../../server/secrets/cipher";
import { createEndpoint } from "../../server/webhooks/endpoints";
import { migrate, type Store } from "../../store/database";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { startCliServer, type CliServer } from "../support/cli";
import { openTestStore } from "../support/test-store";
import { dropEngineData, freshDataDir, testEnv } from "../support/harness";
import { writeEvent } from "./support";
import { byOperator } from "../../server/audit/audit-actor";

/**
 * `paygate serve` as a child process, killed with SIGKILL while deliveries are in flight
 * and queued, then restarted on the same data dir: every event still arrives. Events
 * are written from this process through the real outbox (the store is shared).
 */
describe("delivery survives a crash", () => {
  const dataDir = freshDataDir();
  const env = { PAYGATE_WEBHOOK_TIMEOUT: "2s", PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s,1s" };
  let store: Store;
  let receiver: WebhookReceiver;
  let merchantId: string;
  let server: CliServer | undefined;
  beforeAll(async () => {
    store = await openTestStore(dataDir);
    await migrate(store.db);
    receiver = await startWebhookReceiver();
    merchantId = (await createMerchant(store.db, "Crash Merchant", byOperator())).id;
    const cipher = new Cipher(Buffer.from(testEnv().PAYGATE_MASTER_KEY as string, "base64"));
    await createEndpoint(store.db, cipher, { merchantId, mode: "test" }, { url: receiver.url, event_types: ["*"] }, { current: async () => ({ refuseLoopback: false }) }, byOperator());
  });
  afterAll(async () => {
    await server?.stop("SIGKILL");
    await receiver.close();
    await store.close();
    await dropEngineData(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("delivers every event at least once after kill -9 and a restart", async () => {
    const serve = () => startCliServer(["serve", "--port", "0", "--data", dataDir], { env });
    receiver.hang();
    server = await serve();
    const eventIds: string[] = [];
    for (let i = 0; i < 10; i++) eventIds.push((await writeEvent(store.db, merchantId, "payment.captured")).id);
    // The sweep picks them up; eight are in flight (the per-endpoint limit), two wait.
    await receiver.waitUntil((got) => got.length >= 4, 5000);
    expect(await server.stop("SIGKILL")).toBe(null);

    for (let i = 0; i < 5; i++) eventIds.push((await writeEvent(store.db, merchantId, "payment.refunded")).id);
    receiver.dropHung();
    receiver.answer(200);
    server = await serve();

    const delivered = () => new Set(receiver.received.filter((hit) => hit.answeredWith === 200).map((hit) => hit.headers["x-service-event-id"]));
    await receiver.waitUntil(() => eventIds.every((id) => delivered().has(id)), 15_000);
    await expect
      .poll(async () => (await store.db.selectFrom("webhook_deliveries").select("status").execute()).map((d) => d.status).sort().join(), { timeout: 3000 })
      .toBe(Array(15).fill("succeeded").join());
    await server.stop();
  });
});
