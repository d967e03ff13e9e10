import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenSigningSecret } from "../../cli/commands/listen";
import { EVENT_TYPES } from "../../server/events/event";
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from "../fakes/webhook-receiver";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { startListen } from "./processes";

/** A TCP relay to the server whose connections the test can cut, and refuse for a while. */
async function startRelay(targetPort: number) {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut(refuse: boolean) {
      refusing = refuse;
      for (const s of sockets) s.destroy();
    },
    accept: () => (refusing = false),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("paygate listen, trigger and events against a running server", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  const remote = () => ["--base-url", server.url, "--api-key", shop.secret];

  beforeAll(async () => {
    server = await bootServer();
    receiver = await startWebhookReceiver();
    shop = await seedSandboxMerchant(server, "CLI shop");
  });
  afterAll(async () => {
    await server.stop();
    await receiver.close();
  });

  it("--print-secret prints the same secret on every run, derived from the key", async () => {
    const first = await runCli(["listen", "--print-secret", ...remote()]);
    const second = await runCli(["listen", "--print-secret"], { env: { PAYGATE_BASE_URL: server.url, PAYGATE_API_KEY: shop.secret } });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toMatch(/^whsec_[0-9a-f]{40}$/);
    expect(second.stdout).toBe(first.stdout);
    expect(first.stdout.trim()).toBe(listenSigningSecret(shop.secret));
    expect(listenSigningSecret(shop.publishable)).not.toBe(first.stdout.trim());
  });

  it("prints each event and forwards it signed like a webhook delivery; Ctrl-C exits 0", async () => {
    const listen = await startListen([...remote(), "--forward-to", `${receiver.url}/listen`]);
    const before = receiver.received.length;
    const client = paymentsClient(server, shop.secret);
    const sold = await (await client.sale({ amount: 1200, gateway_token: await client.token() })).json();
    const lines = await listen.waitForLines((l) => l.length >= 2);
    expect(lines[0]).toMatch(new RegExp(`payment\\.authorized\\s+evt_\\w+\\s+${sold.id}\\s+--> 200 in \\d+ ms$`));
    expect(lines[1]).toMatch(new RegExp(`payment\\.captured\\s+evt_\\w+\\s+${sold.id}\\s+--> 200 in \\d+ ms$`));
    const forwarded = receiver.received.slice(before).filter((r) => r.path === "/hooks/listen");
    expect(forwarded.map((r) => JSON.parse(r.raw).type)).toEqual(["payment.authorized", "payment.captured"]);
    for (const request of forwarded) {
      expect(verifySignature(listenSigningSecret(shop.secret), request.headers["x-service-signature"] as string, request.raw)).toBe(true);
      expect(request.headers["x-service-event-id"]).toBe(JSON.parse(request.raw).id);
    }
    expect(await listen.interrupt()).toBe(0);
  });

  it("reconnects after a dropped connection and misses nothing", async () => {
    const relay = await startRelay(server.port);
    const listen = await startListen(["--base-url", relay.url, "--api-key", shop.secret, "--events", "payment.captured", "--json"]);
    try {
      const client = paymentsClient(server, shop.secret);
      const token = await client.token();
      const first = await (await client.sale({ amount: 10, gateway_token: token })).json();
      await listen.waitForLines((l) => l.length >= 1);
      relay.cut(true);
      const missed: string[] = [];
      for (const amount of [11, 12, 13]) missed.push((await (await client.sale({ amount, gateway_token: token })).json()).id);
      relay.accept();
      const lines = await listen.waitForLines((l) => l.length >= 4);
      await new Promise((r) => setTimeout(r, 600));
      const printed = listen.stdout().split("\n").filter(Boolean).map((l) => JSON.parse(l).event);
      expect(printed.map((e: { data: { id: string } }) => e.data.id)).toEqual([first.id, ...missed]);
      expect(lines.length).toBe(4);
      expect(listen.stderr()).toMatch(/Reconnected/);
    } finally {
      await listen.interrupt();
      await relay.close();
    }
  });

  it.each(EVENT_TYPES)("trigger %s makes the calls that record that event", async (type) => {
    const result = await runCli(["trigger", type, ...remote(), "--json", "--override", "amount=4321", "--override", "metadata.source=cli"]);
    expect(result.code, result.stderr).toBe(0);
    const { steps } = JSON.parse(result.stdout);
    const last = steps[steps.length - 1].object;
    const paymentId = last.id ?? last.error?.payment_id;
    const events = await (await server.request(`/v1/events?limit=100&type=${type}`, { headers: auth(shop.secret) })).json();
    const event = events.data.find((e: { data: { id: string } }) => e.data.id === paymentId);
    expect(event, `no ${type} event for ${paymentId}`).toBeDefined();
    expect(event.data.amount).toBe(4321);
    expect(event.data.metadata).toEqual({ source: "cli" });
  });

  it("trigger refuses a live key without calling the server", async () => {
    const result = await runCli(["trigger", "payment.captured", "--base-url", server.url, "--api-key", `sk_live_${"A".repeat(32)}`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/test secret key/);
  });

  it("events list, get and resend (to one endpoint) over HTTP", async () => {
    const endpoints: string[] = [];
    for (const path of ["a", "b"]) {
      const res = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(shop.secret), json: { url: `${receiver.url}/${path}`, event_types: ["payment.voided"] } });
      endpoints.push((await res.json()).id);
    }
    const client = paymentsClient(server, shop.secret);
    const authorized = await (await client.authorize({ amount: 50, gateway_token: await client.token(), capture_method: "manual" })).json();
    await client.void({ payment_id: authorized.id });
    await receiver.waitUntil((r) => r.filter((x) => x.path === "/hooks/a" || x.path === "/hooks/b").length >= 2);

    const list = await runCli(["events", "list", ...remote(), "--type", "payment.voided", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const voided = JSON.parse(list.stdout).data.find((e: { data: { id: string } }) => e.data.id === authorized.id);
    expect(voided).toBeDefined();
    const got = await runCli(["events", "get", voided.id, ...remote(), "--json"]);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: voided.id, type: "payment.voided" });

    const before = receiver.received.length;
    const resent = await runCli(["events", "resend", voided.id, "--endpoint", endpoints[1] as string, ...remote()]);
    expect(resent.code, resent.stderr).toBe(0);
    await receiver.waitUntil((r) => r.slice(before).some((x) => x.path === "/hooks/b"));
    await new Promise((r) => setTimeout(r, 300));
    const again = receiver.received.slice(before);
    expect(again.map((r) => [r.path, r.headers["x-service-event-id"]])).toEqual([["/hooks/b", voided.id]]);

    const unknown = await runCli(["events", "resend", voided.id, "--endpoint", "we_nope", ...remote()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/we_nope/);
  });
});
