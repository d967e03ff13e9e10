/**
 * A charge whose outcome is unknown is never sent twice to a processor that has no
 * idempotency key (TSYS): not after a lost answer, not after a connection reset once the
 * request went out, not after paygate restarts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpCall, TIMEOUT } from "../../server/connectors/http-call";
import { startTsysFake, type TsysFake } from "../fakes/tsys-fake";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { startCliServer } from "../support/cli";
import { liveMerchant } from "./live-account";

/** Forwards to `target`; while `resetNext` is set, the processor handles the request and the answer is lost to a TCP reset. */
async function resettingProxy(target: string): Promise<{ url: string; resetNext: number; close(): Promise<void> }> {
  const proxy = { url: "", resetNext: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      let answer: Response;
      let body: string;
      try {
        answer = await fetch(target + (req.url ?? ""), { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
        body = await answer.text();
      } catch {
        req.socket.destroy();
        return;
      }
      if (proxy.resetNext > 0) {
        proxy.resetNext -= 1;
        req.socket.resetAndDestroy();
        return;
      }
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

describe("TSYS references in doubt", () => {
  let tsys: TsysFake;
  let proxy: Awaited<ReturnType<typeof resettingProxy>>;
  let dataDir: string;
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof liveMerchant>>;
  const env = () => ({ PAYGATE_TSYS_BASE_URL: proxy.url, PAYGATE_CONNECTOR_TIMEOUT: "300ms" });

  beforeAll(async () => {
    tsys = await startTsysFake();
    proxy = await resettingProxy(tsys.baseUrl);
    dataDir = freshDataDir();
    server = await bootServer({ dataDir, env: env() });
    shop = await liveMerchant(server, "tsys");
  });
  afterAll(async () => {
    await server.stop();
    await proxy.close();
    await tsys.close();
  });

  it("a connection reset after the request was sent is in doubt: 504, and the retry is not re-sent", async () => {
    const from = tsys.requests.length;
    proxy.resetNext = 1;
    const first = await shop.client.sale({ amount: 7100, gateway_token: shop.token }, { "idempotency-key": "reset-sale" });
    expect(first.status).toBe(504);
    expect((await first.json()).error.code).toBe("connector_timeout");
    const retry = await shop.client.sale({ amount: 7100, gateway_token: shop.token }, { "idempotency-key": "reset-sale" });
    expect(retry.status).toBe(504);
    expect(tsys.requests.length - from).toBe(1);
    expect(tsys.charges.filter((charge) => charge.amount === 71_000)).toHaveLength(1);
  });

  it("stays in doubt after paygate restarts on the same data dir (a new serve process)", async () => {
    const from = tsys.requests.length;
    const sale = (url: string) =>
      fetch(`${url}/v1/payments/sale`, {
        method: "POST",
        headers: { authorization: `Bearer ${shop.live.secret}`, "idempotency-key": "restart-sale", "content-type": "application/json" },
        body: JSON.stringify({ amount: 7200, currency: "usd", gateway_token: shop.token }),
      });
    tsys.failNext("hang", 1);
    const before = await startCliServer(["serve", "--port", "0", "--data", dataDir], { env: env() });
    try {
      expect((await sale(before.url)).status).toBe(504);
    } finally {
      await before.stop();
    }
    const after = await startCliServer(["serve", "--port", "0", "--data", dataDir], { env: env() });
    try {
      expect((await sale(after.url)).status).toBe(504);
    } finally {
      await after.stop();
    }
    expect(tsys.requests.length - from).toBe(1);
    expect(tsys.charges.filter((charge) => charge.amount === 72_000)).toHaveLength(1);
  });
});

describe("httpCall", () => {
  it("counts a reset after sending as in doubt, and a refused connection as an error", async () => {
    const resetting = createServer((req) => {
      req.resume();
      req.on("end", () => req.socket.resetAndDestroy());
    });
    await new Promise<void>((resolve) => resetting.listen(0, "127.0.0.1", resolve));
    const port = (resetting.address() as AddressInfo).port;
    const request = (url: string) => httpCall("Test", { url, headers: {}, body: "x" }, AbortSignal.timeout(5_000));
    try {
      expect(await request(`http://127.0.0.1:${port}/`)).toEqual({ ok: false, result: TIMEOUT });
    } finally {
      await new Promise((resolve) => resetting.close(resolve));
    }
    expect(await request(`http://127.0.0.1:${port}/`)).toEqual({ ok: false, result: { outcome: "error", code: "processor_error", message: "could not reach Test" } });
  });
});
