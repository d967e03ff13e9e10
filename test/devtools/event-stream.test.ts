import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

interface SseEvent {
  id: string;
  type: string;
  data: { id: string; type: string; data: { id: string } };
}

/** Reads server-sent events from `res` until `count` arrived, then drops the connection. */
async function readEvents(res: Response, count: number, abort: AbortController): Promise<SseEvent[]> {
  const got: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return got;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) => block.split("\n").find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      const data = field("data");
      if (data) got.push({ id: field("id") as string, type: field("event") as string, data: JSON.parse(data) });
      if (got.length === count) {
        await reader.cancel().catch(() => undefined);
        abort.abort();
        return got;
      }
    }
  }
}

describe("GET /v1/events/stream", () => {
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  let other: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  beforeAll(async () => {
    server = await bootServer();
    shop = await seedSandboxMerchant(server, "Streamer");
    other = await seedSandboxMerchant(server, "Other");
  });
  afterAll(() => server.stop());

  const open = (key: string, init: { lastEventId?: string; types?: string; signal?: AbortSignal } = {}) =>
    fetch(`${server.url}/v1/events/stream${init.types ? `?types=${init.types}` : ""}`, {
      headers: { authorization: `Bearer ${key}`, ...(init.lastEventId && { "last-event-id": init.lastEventId }) },
      signal: init.signal,
    });

  it("streams the merchant's new events as they are recorded, not another merchant's", async () => {
    const abort = new AbortController();
    const res = await open(shop.secret, { signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reading = readEvents(res, 2, abort);
    await paymentsClient(server, other.secret).sale({ amount: 300, gateway_token: await paymentsClient(server, other.secret).token() });
    const client = paymentsClient(server, shop.secret);
    const authorized = await (await client.authorize({ amount: 900, gateway_token: await client.token(), capture_method: "manual" })).json();
    await client.capture({ payment_id: authorized.id });
    const events = await reading;
    expect(events.map((e) => [e.type, e.data.data.id])).toEqual([
      ["payment.authorized", authorized.id],
      ["payment.captured", authorized.id],
    ]);
    expect(events.every((e) => e.id === e.data.id)).toBe(true);
  });

  it("resumes after a dropped connection with exactly the events after Last-Event-ID", async () => {
    const client = paymentsClient(server, shop.secret);
    const token = await client.token();
    const first = new AbortController();
    // A sale records authorized then captured: follow one type so each sale is one event.
    const reading = readEvents(await open(shop.secret, { types: "payment.captured", signal: first.signal }), 1, first);
    await client.sale({ amount: 100, gateway_token: token });
    const [seen] = await reading;
    // Recorded while nobody is connected.
    const missed: string[] = [];
    for (const amount of [101, 102, 103]) missed.push((await (await client.sale({ amount, gateway_token: token })).json()).id);
    const second = new AbortController();
    const resumed = await readEvents(await open(shop.secret, { types: "payment.captured", lastEventId: seen?.id, signal: second.signal }), 3, second);
    expect(resumed.map((e) => e.data.data.id)).toEqual(missed);
    const ids = resumed.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => id > (seen?.id as string))).toBe(true);
  });

  it("filters by type", async () => {
    const client = paymentsClient(server, shop.secret);
    const abort = new AbortController();
    const reading = readEvents(await open(shop.secret, { types: "payment.voided", signal: abort.signal }), 1, abort);
    const authorized = await (await client.authorize({ amount: 400, gateway_token: await client.token(), capture_method: "manual" })).json();
    await client.void({ payment_id: authorized.id });
    const [voided] = await reading;
    expect([voided?.type, voided?.data.data.id]).toEqual(["payment.voided", authorized.id]);
  });

  it("sees events written by another process on the same store", async () => {
    const abort = new AbortController();
    const reading = readEvents(await open(shop.secret, { signal: abort.signal }), 1, abort);
    const second = await bootServer({ dataDir: server.dataDir });
    try {
      const client = paymentsClient(second, shop.secret);
      const sold = await (await client.sale({ amount: 250, gateway_token: await client.token() })).json();
      const [event] = await reading;
      expect(event?.data.data.id).toBe(sold.id);
    } finally {
      await second.close();
    }
  });

  it("refuses a malformed Last-Event-ID and a publishable key", async () => {
    const bad = await server.request("/v1/events/stream", { headers: { ...auth(shop.secret), "last-event-id": "nope" } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe("Last-Event-ID");
    const publishable = await server.request("/v1/events/stream", { headers: auth(shop.publishable) });
    expect(publishable.status).toBe(403);
  });

  it("ends open streams cleanly when the server shuts down", async () => {
    const second = await bootServer({ dataDir: server.dataDir });
    const res = await fetch(`${second.url}/v1/events/stream`, { headers: { authorization: `Bearer ${shop.secret}` } });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const closed = second.close();
    // A stream left open would be cut when the grace period runs out: an error, not an end.
    let end: IteratorResult<Uint8Array>;
    do end = await reader.read();
    while (!end.done);
    await closed;
  });
});
