import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../server/errors";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { guardedLookup, postWebhook, WebhookConnections } from "../../server/webhooks/send";
import { addressRefusal, checkEndpointUrl } from "../../server/webhooks/url-policy";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";

describe("webhook URL policy", () => {
  it("classifies addresses", () => {
    const refused = ["127.0.0.1", "127.8.9.10", "::1", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fdff::1", "169.254.169.254", "fe80::1", "0.0.0.0", "::", "100.64.0.1", "100.127.255.254", "::ffff:192.168.0.1", "224.0.0.1"];
    for (const address of refused) expect(addressRefusal(address, "live"), address).toBeDefined();
    const allowed = ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "192.169.0.1", "11.0.0.1"];
    for (const address of allowed) expect(addressRefusal(address, "live"), address).toBeUndefined();
    expect(addressRefusal("127.0.0.1", "test")).toBeUndefined();
    expect(addressRefusal("::1", "test")).toBeUndefined();
    expect(addressRefusal("10.0.0.1", "test")).toBe("a private address (test-mode webhooks may only go to public or loopback addresses)");
  });

  it("normalizes the URL it accepts and names the problem in the one it refuses", () => {
    expect(checkEndpointUrl("https://Example.COM:443/a/../hooks", "live")).toBe("https://example.com/hooks");
    expect(() => checkEndpointUrl("https://0x7f.1/hooks", "live")).toThrow(/127\.0\.0\.1 is a loopback address/);
    try {
      checkEndpointUrl("http://example.com", "live");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 400, code: "parameter_invalid", details: { param: "url" } });
      expect((error as ApiError).message).toBe("Invalid webhook URL: live-mode endpoints must use https://.");
    }
  });
});

describe("sending checks the address it connects to", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  const send = (url: string, mode: "test" | "live", timeoutMs = 2000) => postWebhook({ url, mode, body: "{}", headers: { "content-type": "application/json" } }, timeoutMs);

  it("refuses a host name whose resolved address is not allowed", async () => {
    const resolve = (mode: "test" | "live", all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((done) => guardedLookup(mode)("localhost", { all }, (error, address) => done({ error, address })));
    for (const all of [true, false]) {
      const refused = await resolve("live", all);
      expect(refused.error?.message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address \(live-mode webhooks may only go to public addresses\)$/);
      expect((await resolve("test", all)).error).toBeNull();
    }
  });

  it("refuses loopback names in live mode without connecting", async () => {
    const before = receiver.connections();
    for (const host of ["localhost", "localhost.", "app.localhost"]) {
      const outcome = await send(`https://${host}:${receiver.port}/hooks`, "live");
      expect(outcome, host).toMatchObject({ delivered: false, statusCode: null, error: expect.stringMatching(/^refused: .* is a loopback name/) });
    }
    expect(receiver.connections()).toBe(before);
  });

  it("refuses a literal address and a live http:// URL without connecting", async () => {
    const before = receiver.connections();
    expect((await send(`http://127.0.0.1:${receiver.port}/hooks`, "live")).error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect((await send(`http://10.0.0.1:${receiver.port}/hooks`, "test")).error).toMatch(/^refused: 10\.0\.0\.1 is a private address/);
    expect(receiver.connections()).toBe(before);
  });

  it("reaches loopback by name in test mode", async () => {
    const outcome = await send(`http://localhost:${receiver.port}/hooks`, "test");
    expect(outcome).toMatchObject({ delivered: true, statusCode: 200, error: null, responseExcerpt: "ok" });
  });

  it("counts a receiver that does not answer in time as a failed attempt", async () => {
    receiver.hang();
    const outcome = await send(receiver.url, "test", 300);
    expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: "timed out after 300 ms" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
    receiver.dropHung();
    receiver.answer(200);
  });

  it("counts a redirect as a failure and keeps only the first 500 bytes of an answer", async () => {
    receiver.answer(302);
    expect(await send(receiver.url, "test")).toMatchObject({ delivered: false, statusCode: 302 });
    receiver.answer(200, "é".repeat(100) + "x".repeat(100_000));
    const long = await send(receiver.url, "test");
    expect(long.delivered).toBe(true);
    expect(Buffer.byteLength(long.responseExcerpt ?? "")).toBe(500);
    expect(long.responseExcerpt).toBe("é".repeat(100) + "x".repeat(300));
    receiver.answer(200);
  });
});

describe("kept connections (the dispatcher's keep-alive agents)", () => {
  let receiver: WebhookReceiver;
  const connections = new WebhookConnections();
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    connections.close();
    await receiver.close();
  });

  const send = (url: string, mode: "test" | "live") => postWebhook({ url, mode, body: "{}", headers: { "content-type": "application/json" } }, 2000, undefined, connections);

  it("reuse one connection for deliveries to one target", async () => {
    const before = receiver.connections();
    for (let i = 0; i < 5; i++) expect(await send(`http://localhost:${receiver.port}/hooks`, "test")).toMatchObject({ delivered: true, statusCode: 200 });
    expect(receiver.connections() - before).toBe(1);
  });

  it("still check the address of every new connection: a name resolving to a forbidden address is refused without connecting", async () => {
    // The machine's own name resolves to one of its addresses: never a public one a live endpoint may reach.
    const name = hostname();
    const { address } = await lookup(name);
    expect(addressRefusal(address, "live")).toBeDefined();
    const before = receiver.connections();
    for (let i = 0; i < 3; i++) {
      const outcome = await send(`https://${name}:${receiver.port}/hooks`, "live");
      expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: expect.stringMatching(new RegExp(`^refused: ${name} resolves to `)) });
    }
    expect(receiver.connections()).toBe(before);
  });
});
