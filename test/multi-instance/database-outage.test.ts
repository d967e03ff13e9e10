/**
 * PostgreSQL stops for 5 s under a trickle of sales and reads spread over three
 * instances: every answer is a 2xx or a 503 `service_unavailable` in the error envelope
 * (never a 500, never a hang), readiness turns red, and once the database is back every
 * instance answers 2xx again without a restart. The cluster is this file's own: the
 * run's shared one serves other files meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTemplate, createTestDatabase, startCluster, type Cluster } from "../support/postgres";
import { freshKey, LIVE_CARD, ON_POSTGRES, post, startDeployment, type Deployment } from "./deployment";

const OUTAGE_MS = 5_000;

describe.runIf(ON_POSTGRES)("PostgreSQL stopped for 5 s under load, three instances", () => {
  let cluster: Cluster;
  let deployment: Deployment;
  let token: string;

  beforeAll(async () => {
    cluster = await startCluster();
    await createTemplate(cluster.adminUrl);
    deployment = await startDeployment({ databaseUrl: await createTestDatabase(cluster.adminUrl) });
    token = (await post(deployment.servers[0]!, deployment.key, "/v1/tokens", { card: LIVE_CARD })).body.token;
  }, 120_000);

  afterAll(async () => {
    await deployment?.close();
    cluster?.destroy();
  });

  it("answers 2xx or 503 throughout, readiness red while down, and recovers by itself", async () => {
    const { servers, key } = deployment;
    const seen: Array<{ phase: string; status: number; code?: string; detail?: string }> = [];
    let phase = "before";
    let running = true;

    async function once(server: number): Promise<void> {
      const url = servers[server]!.url;
      const signal = AbortSignal.timeout(15_000);
      const requests = [
        () => fetch(`${url}/v1/payments/sale`, { method: "POST", signal, headers: { authorization: `Bearer ${key}`, "idempotency-key": freshKey("outage"), "content-type": "application/json" }, body: JSON.stringify({ amount: 700, currency: "usd", gateway_token: token }) }),
        () => fetch(`${url}/v1/payments?limit=3`, { signal, headers: { authorization: `Bearer ${key}` } }),
      ];
      for (const request of requests) {
        const at = phase;
        try {
          const res = await request();
          const body = (await res.json()) as any;
          seen.push({ phase: at, status: res.status, code: body.error?.code, detail: res.status >= 500 && res.status !== 503 ? JSON.stringify(body) : undefined });
        } catch (error) {
          seen.push({ phase: at, status: 0, detail: String(error) });
        }
      }
    }
    const trickle = Promise.all(
      [0, 1, 2].map(async (server) => {
        while (running) {
          await once(server);
          await new Promise((r) => setTimeout(r, 50));
        }
      }),
    );

    await new Promise((r) => setTimeout(r, 1_000));
    phase = "down";
    cluster.stop();
    const downSince = Date.now();
    // Readiness names the database while it is gone.
    for (const server of servers) {
      const ready = await fetch(`${server.url}/health/ready`, { signal: AbortSignal.timeout(10_000) });
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as any).checks.database).not.toBe("ok");
    }
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downSince))));
    phase = "restarting";
    cluster.start();
    phase = "after";
    // Every instance back to 2xx by itself: a sale through each within 20 s.
    for (const server of servers) {
      await expect
        .poll(async () => (await post(server, key, "/v1/payments/sale", { amount: 700, currency: "usd", gateway_token: token })).status, { timeout: 20_000, interval: 250 })
        .toBe(201);
    }
    phase = "recovered";
    await new Promise((r) => setTimeout(r, 1_000));
    running = false;
    await trickle;

    const summary = JSON.stringify(seen.filter((s) => s.status !== 200 && s.status !== 201).slice(0, 20));
    expect(seen.filter((s) => s.phase === "down").length, "requests answered during the outage").toBeGreaterThan(0);
    for (const s of seen) {
      expect([200, 201, 503], summary).toContain(s.status);
      if (s.status === 503) expect(s.code, summary).toBe("service_unavailable");
    }
    expect(seen.filter((s) => s.phase === "down").some((s) => s.status === 503), summary).toBe(true);
    expect(seen.filter((s) => s.phase === "recovered").every((s) => s.status === 200 || s.status === 201), summary).toBe(true);
    for (const server of servers) expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
  }, 120_000);
});
