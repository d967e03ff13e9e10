import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProductionRule } from "../../server/production-rule";
import { postWebhook, WebhookConnections } from "../../server/webhooks/send";
import { WebhookTargets } from "../../server/webhooks/targets";
import { migrate, type Store } from "../../store/database";
import { isMarkedProduction, markProduction } from "../../store/production-mark";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { runCli, startCliServer } from "../support/cli";
import { bootServer, dropEngineData, freshDataDir, type TestServer } from "../support/harness";
import { openTestStore } from "../support/test-store";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { createEndpoint, emitEvent, firstAttempts } from "./support";

/**
 * Production is the database's, not the process's: a server with PAYGATE_ENV=production
 * marks the database it serves, and every process on it afterwards (a second server,
 * the CLI, a server already running) follows the production rules without the setting.
 */
const REFUSED_LOOPBACK = /^refused: 127\.0\.0\.1 is a loopback address \(test-mode webhooks of a production server may only go to public addresses\)/;

describe("a database a production server served", () => {
  const dataDir = freshDataDir();
  let receiver: WebhookReceiver;
  let m: SeededMerchant;
  let endpointId: string;
  let productionError: unknown;
  let server: TestServer | undefined;
  const loopbackEndpoint = (on: TestServer) => on.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: receiver.url, event_types: ["*"] } });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const before = await bootServer({ dataDir });
    m = await seedMerchant(before, "Laptop first");
    endpointId = (await createEndpoint(before, m.secret, { url: receiver.url, event_types: ["payment.captured"] })).id;
    expect(await isMarkedProduction(before.app.db)).toBe(false);
    await before.close();

    const production = await bootServer({ dataDir, env: { PAYGATE_ENV: "production" } });
    expect(await isMarkedProduction(production.app.db)).toBe(true);
    const refused = await loopbackEndpoint(production);
    expect(refused.status).toBe(400);
    const { request_id: _, ...error } = (await refused.json()).error;
    productionError = error;
    await production.close();
  });
  afterAll(async () => {
    await server?.stop();
    await dropEngineData(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
    await receiver.close();
  });

  it("makes a server started without PAYGATE_ENV refuse loopback endpoints and deliveries, and say so at start", async () => {
    server = await bootServer({ dataDir });
    expect(server.readLog()).toContain("this database is marked production");
    const refused = await loopbackEndpoint(server);
    expect(refused.status).toBe(400);
    const { request_id: _, ...error } = (await refused.json()).error;
    expect(error).toEqual(productionError);
    expect(productionError).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", param: "url" });

    const test = await server.request(`/v1/webhook_endpoints/${endpointId}/test`, { method: "POST", headers: auth(m.secret) });
    expect(await test.json()).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(REFUSED_LOOPBACK) });
    const event = await emitEvent(server, m.merchant.id, "payment.captured");
    expect(await firstAttempts(server, event.id, endpointId)).toEqual([{ status_code: null, error: expect.stringMatching(REFUSED_LOOPBACK), response_excerpt: null }]);
    expect(receiver.connections()).toBe(0);
  });

  it("makes the CLI without PAYGATE_ENV refuse to save a loopback endpoint", async () => {
    const cli = await runCli(["endpoints", "create", "--merchant", m.merchant.id, "--url", receiver.url, "--events", "*", "--data", dataDir]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^paygate: Invalid webhook URL: 127\.0\.0\.1 is a loopback address \(test-mode webhooks of a production server may only go to public addresses\)\.\n$/);
  });

  it("refuses development mode", async () => {
    await expect(bootServer({ dataDir, dev: true })).rejects.toThrow(/^invalid --dev \/ PAYGATE_DEV_MODE: development mode refuses a production database \(/);
  });
});

describe("a server already running when another process marks its database", () => {
  const dataDir = freshDataDir();
  let captured: WebhookReceiver;
  let refunded: WebhookReceiver;
  let server: TestServer;
  let m: SeededMerchant;
  let capturedEndpoint: string;
  let refundedEndpoint: string;
  beforeAll(async () => {
    [captured, refunded] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    server = await bootServer({ dataDir });
    m = await seedMerchant(server, "Marked meanwhile");
    capturedEndpoint = (await createEndpoint(server, m.secret, { url: captured.url, event_types: ["payment.captured"] })).id;
    refundedEndpoint = (await createEndpoint(server, m.secret, { url: refunded.url, event_types: ["payment.refunded"] })).id;
  });
  afterAll(async () => {
    await server.stop();
    await Promise.all([captured.close(), refunded.close()]);
  });

  it("learns of the mark within seconds, then refuses loopback targets, on the connections it kept and on new ones", async () => {
    await emitEvent(server, m.merchant.id, "payment.captured");
    await captured.waitUntil((got) => got.length === 1);

    const production = await startCliServer(["serve", "--port", "0", "--data", dataDir], { env: { PAYGATE_ENV: "production" } });
    expect(await production.stop()).toBe(0);
    // Nothing here asks the database before this: the server's own sweep reads the mark.
    await expect.poll(() => server.app.production.known, { timeout: 3000 }).toBe(true);

    const again = await emitEvent(server, m.merchant.id, "payment.captured");
    expect(await firstAttempts(server, again.id, capturedEndpoint)).toEqual([{ status_code: null, error: expect.stringMatching(REFUSED_LOOPBACK), response_excerpt: null }]);
    expect(captured.received).toHaveLength(1);
    expect(captured.openConnections()).toBe(0);

    const event = await emitEvent(server, m.merchant.id, "payment.refunded");
    expect(await firstAttempts(server, event.id, refundedEndpoint)).toEqual([{ status_code: null, error: expect.stringMatching(REFUSED_LOOPBACK), response_excerpt: null }]);
    expect(refunded.connections()).toBe(0);

    const saved = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: captured.url, event_types: ["*"] } });
    expect(saved.status).toBe(400);
    expect((await saved.json()).error.message).toMatch(/production server may only go to public addresses/);
  });
});

describe("a webhook connection opened after the database was marked", () => {
  const dataDir = freshDataDir();
  let first: WebhookReceiver;
  let second: WebhookReceiver;
  let sender: Store;
  let other: Store;
  let connections: WebhookConnections;
  beforeAll(async () => {
    [first, second] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    sender = await openTestStore(dataDir);
    await migrate(sender.db);
    other = await openTestStore(dataDir);
  });
  afterAll(async () => {
    connections.close();
    await Promise.all([first.close(), second.close(), sender.close(), other.close()]);
    await dropEngineData(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("reads the mark as it opens, with no sweep to learn it first (marking twice is harmless)", async () => {
    const targets = new WebhookTargets(new ProductionRule(sender.db, false));
    connections = new WebhookConnections(targets);
    const send = (url: string) => postWebhook({ url, mode: "test", rules: targets.known(), body: "{}", headers: { "content-type": "application/json" } }, 2000, undefined, connections);
    expect(await send(first.url)).toMatchObject({ delivered: true });
    expect(first.openConnections()).toBe(1);

    await markProduction(other.db);
    await markProduction(other.db);
    expect(await isMarkedProduction(other.db)).toBe(true);

    expect(await send(second.url)).toMatchObject({ delivered: false, statusCode: null, error: expect.stringMatching(REFUSED_LOOPBACK) });
    expect(second.connections()).toBe(0);
    // Learning the mark closed the idle connection kept from before it.
    await expect.poll(() => first.openConnections()).toBe(0);
    expect(await send(first.url)).toMatchObject({ delivered: false, error: expect.stringMatching(REFUSED_LOOPBACK) });
    expect(first.received).toHaveLength(1);
  });
});
