import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedLookup } from "../../server/webhooks/send";
import { addressRefusal, checkEndpointUrl } from "../../server/webhooks/url-policy";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { emitEvent, firstAttempts } from "./support";

/**
 * On a production server (PAYGATE_ENV=production) loopback is the operator's machine,
 * where services not meant for merchants listen: a test-mode endpoint may not target
 * it, as a live one may not anywhere. Elsewhere test mode keeps it for local receivers.
 */
describe("test-mode webhooks on a production server", () => {
  it("refuse loopback addresses and names by rule, and keep them elsewhere", async () => {
    expect(addressRefusal("127.0.0.1", "test", true)).toBe("a loopback address (test-mode webhooks of a production server may only go to public addresses)");
    expect(addressRefusal("::1", "test", true)).toMatch(/^a loopback address/);
    expect(addressRefusal("127.0.0.1", "test", false)).toBeUndefined();
    expect(addressRefusal("8.8.8.8", "test", true)).toBeUndefined();
    expect(() => checkEndpointUrl("http://localhost:8080/hooks", "test", { refuseLoopback: true })).toThrow(/localhost is a loopback name \(test-mode webhooks of a production server/);
    expect(checkEndpointUrl("http://localhost:8080/hooks", "test", { refuseLoopback: false })).toBe("http://localhost:8080/hooks");
    expect(checkEndpointUrl("http://example.com/hooks", "test", { refuseLoopback: true })).toBe("http://example.com/hooks");
    const resolve = (refuseLoopback: boolean) =>
      new Promise<Error | null>((done) => guardedLookup("test", 80, { refuseLoopback })("localhost", { all: true }, (error) => done(error)));
    expect((await resolve(true))?.message).toMatch(/^refused: localhost resolves to .*loopback address/);
    expect(await resolve(false)).toBeNull();
  });

  describe("end to end", () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let m: SeededMerchant;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      server = await bootServer({ env: { PAYGATE_ENV: "production" } });
      m = await seedMerchant(server, "Production host");
    });
    afterAll(async () => {
      await server.stop();
      await receiver.close();
    });

    it("refuses a loopback endpoint over HTTP and the CLI, and does not deliver to one stored before", async () => {
      for (const url of [receiver.url, receiver.url.replace("127.0.0.1", "localhost")]) {
        const res = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url, event_types: ["*"] } });
        expect(res.status, url).toBe(400);
        expect((await res.json()).error).toMatchObject({ code: "parameter_invalid", param: "url", message: expect.stringMatching(/production server may only go to public addresses/) });
      }
      const cli = await runCli(["endpoints", "create", "--merchant", m.merchant.id, "--url", receiver.url, "--events", "*", "--data", server.dataDir], { env: { PAYGATE_ENV: "production" } });
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toMatch(/production server may only go to public addresses/);

      const created = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: "http://example.invalid/hooks", event_types: ["payment.captured"] } });
      expect(created.status).toBe(201);
      const endpoint = await created.json();
      await server.app.db.updateTable("webhook_endpoints").set({ url: receiver.url }).where("id", "=", endpoint.id).execute();
      const test = await server.request(`/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST", headers: auth(m.secret) });
      expect(await test.json()).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
      const event = await emitEvent(server, m.merchant.id, "payment.captured");
      const attempts = await firstAttempts(server, event.id, endpoint.id);
      expect(attempts).toEqual([{ status_code: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/), response_excerpt: null }]);
      expect(receiver.received).toHaveLength(0);
    });
  });
});
