import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, TEST_ENGINE, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { createTemplate, createTestDatabase, startCluster, type Cluster } from "../support/postgres";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * PostgreSQL goes away under a trickle of requests and comes back: paygate answers
 * 2xx or 503 throughout (never a 500, never a hang), readiness turns red, and it
 * serves again without a restart. A cluster of its own, so no other test loses its
 * database.
 */
describe.skipIf(TEST_ENGINE !== "postgres")("losing the PostgreSQL database", () => {
  let cluster: Cluster;
  let server: TestServer;

  beforeAll(async () => {
    cluster = await startCluster();
    await createTemplate(cluster.adminUrl);
    server = await bootServer({ env: { PAYGATE_DATABASE_URL: await createTestDatabase(cluster.adminUrl) } });
  });
  afterAll(async () => {
    await server?.stop();
    cluster?.destroy();
  });

  it("answers only 2xx or 503 while it is stopped, readiness goes red, then 2xx again without a restart", async () => {
    const shop = await seedSandboxMerchant(server);
    const client = paymentsClient(server, shop.secret);
    const token = await client.token();
    const seen: Array<{ phase: string; kind: string; status: number }> = [];
    let phase = "before";
    let trickling = true;
    const trickle = (async () => {
      while (trickling) {
        const at = phase;
        // A hang would show as an abort: fetch fails and the test with it.
        const signal = AbortSignal.timeout(15_000);
        const [sale, ready] = await Promise.all([client.sale({ amount: 500, gateway_token: token }, {}), server.request("/health/ready", { signal })]);
        // A request the stop or start overtook belongs to no phase.
        const label = phase === at ? at : "transition";
        seen.push({ phase: label, kind: "sale", status: sale.status }, { phase: label, kind: "ready", status: ready.status });
        if (sale.status === 503) expect((await sale.json()).error).toMatchObject({ code: "service_unavailable" });
        await sleep(100);
      }
    })();

    await sleep(1000);
    phase = "down";
    cluster.stop();
    await sleep(4000);
    phase = "restarting";
    cluster.start();
    let recovered = false;
    for (let i = 0; i < 50 && !recovered; i++) {
      await sleep(200);
      recovered = seen.slice(-2).every((s) => s.status < 300);
    }
    phase = "after";
    await sleep(1500);
    trickling = false;
    await trickle;

    const log = JSON.stringify(seen);
    expect(seen.filter((s) => s.status !== 503 && (s.status < 200 || s.status >= 300))).toEqual([]);
    expect(seen.filter((s) => s.phase === "before").every((s) => s.status < 300), log).toBe(true);
    expect(seen.some((s) => s.phase === "down" && s.kind === "sale" && s.status === 503), log).toBe(true);
    expect(seen.some((s) => s.phase === "down" && s.kind === "ready" && s.status === 503), log).toBe(true);
    const after = seen.filter((s) => s.phase === "after");
    expect(after.length).toBeGreaterThan(4);
    expect(after.every((s) => s.status < 300), log).toBe(true);
  });
});
