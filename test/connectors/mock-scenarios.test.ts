/**
 * The mock connector's scenario cards (issue 18), each over HTTP against the real
 * server: a timeout, a processor error, a declined capture, a declined refund and a
 * card that succeeds on the second try with the same Idempotency-Key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_CARDS } from "../../server/connectors/mock/test-cards";
import { sandboxBanner } from "../../server/sandbox/banner";
import { expectError } from "../support/errors";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

const TIMEOUT_MS = 1000;
const card = (scenario: string) => {
  const found = TEST_CARDS.find((c) => c.scenario === scenario);
  if (!found) throw new Error(`no test card for ${scenario}`);
  return found.number;
};
const paymentCount = async (server: TestServer) => Number((await server.app.db.selectFrom("payments").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);

describe("mock connector scenarios", () => {
  let server: TestServer;
  let client: ReturnType<typeof paymentsClient>;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_CONNECTOR_TIMEOUT: `${TIMEOUT_MS}ms` } });
    client = paymentsClient(server, (await seedSandboxMerchant(server)).secret);
  });
  afterAll(() => server.stop());

  it("every scenario card is a Luhn-valid test card that test keys can tokenize", async () => {
    for (const { number } of TEST_CARDS) {
      const digits = [...number].reverse().map(Number);
      const sum = digits.reduce((acc, d, i) => acc + (i % 2 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d), 0);
      expect(sum % 10, number).toBe(0);
      expect(await client.token(number)).toMatch(/^tok_/);
    }
  });

  it("the timeout card answers 504 connector_timeout after PAYGATE_CONNECTOR_TIMEOUT and writes nothing", async () => {
    const token = await client.token(card("timeout"));
    const before = await paymentCount(server);
    const started = Date.now();
    const error = await expectError(await client.sale({ amount: 1000, gateway_token: token }), 504, "connector_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(error.type).toBe("timeout_error");
    expect(await paymentCount(server)).toBe(before);
  });

  it("the processing-error card answers 502 connector_error with connector_code processing_error, every time", async () => {
    const token = await client.token(card("processing_error"));
    const before = await paymentCount(server);
    for (const key of ["pe-1", "pe-1", "pe-2"]) {
      const error = await expectError(await client.sale({ amount: 1000, gateway_token: token }, { "idempotency-key": key }), 502, "connector_error");
      expect(error).toMatchObject({ type: "connector_error", connector_code: "processing_error" });
    }
    expect(await paymentCount(server)).toBe(before);
  });

  it("the capture-decline card authorizes, then its capture is declined and the payment stays authorized", async () => {
    const token = await client.token(card("capture_declined"));
    const auth = await client.authorize({ amount: 1500, gateway_token: token, capture_method: "manual" });
    expect(auth.status).toBe(201);
    const payment = await auth.json();
    expect(payment.status).toBe("authorized");
    const error = await expectError(await client.capture({ payment_id: payment.id }), 502, "connector_error");
    expect(error).toMatchObject({ connector_code: "capture_declined", payment_id: payment.id });
    expect((await (await client.get(payment.id)).json()).status).toBe("authorized");
    expect((await client.void({ payment_id: payment.id })).status).toBe(200);
  });

  it("the refund-decline card's sale succeeds, then its refund is declined and nothing is refunded", async () => {
    const token = await client.token(card("refund_declined"));
    const sale = await client.sale({ amount: 2000, gateway_token: token });
    expect(sale.status).toBe(201);
    const payment = await sale.json();
    expect(payment.status).toBe("succeeded");
    const error = await expectError(await client.refund({ payment_id: payment.id, amount: 500 }), 502, "connector_error");
    expect(error).toMatchObject({ connector_code: "refund_declined", payment_id: payment.id });
    const after = await (await client.get(payment.id)).json();
    expect(after).toMatchObject({ status: "succeeded", amount_refunded: 0 });
  });

  it("ordinary cards' follow-ons are approved", async () => {
    const sale = await client.sale({ amount: 700, gateway_token: await client.token("4242424242424242") });
    const refund = await client.refund({ payment_id: (await sale.json()).id });
    expect(refund.status).toBe(200);
  });

  it("the banner lists every test card with its outcome", () => {
    const info = {
      merchant: { id: "m", short_id: "mrc_x" },
      keys: { secret: "sk", publishable: "pk", admin: "ak" },
      connector_account: { id: "a", short_id: "ca_x" },
      sample_token: "tok_x",
    } as unknown as Parameters<typeof sandboxBanner>[0];
    const banner = sandboxBanner(info, "http://127.0.0.1:1", "/tmp/x", false);
    for (const c of TEST_CARDS) expect(banner).toContain(`${c.number}  ${c.outcome}`);
  });
});

describe("the second-try card", () => {
  it("fails with processing_error, then succeeds on the retry with the same Idempotency-Key, across a restart", async () => {
    const first = await bootServer();
    const shop = await seedSandboxMerchant(first);
    const before = paymentsClient(first, shop.secret);
    const token = await before.token(card("second_try"));
    const headers = { "idempotency-key": "second-try-1" };

    const failed = await expectError(await before.sale({ amount: 1200, gateway_token: token }, headers), 502, "connector_error");
    expect(failed.connector_code).toBe("processing_error");
    // Another key is another processor reference: its own first try fails too.
    expect((await before.sale({ amount: 1200, gateway_token: token }, { "idempotency-key": "second-try-other" })).status).toBe(502);
    await first.close();

    const second = await bootServer({ dataDir: first.dataDir });
    try {
      const after = paymentsClient(second, shop.secret);
      // The key is bound to its first parameters: another amount would reuse the processor reference.
      await expectError(await after.sale({ amount: 99_999, gateway_token: token }, headers), 422, "idempotency_param_mismatch");
      const retried = await after.sale({ amount: 1200, gateway_token: token }, headers);
      expect(retried.status).toBe(201);
      expect((await retried.json()).status).toBe("succeeded");
      const replayed = await after.sale({ amount: 1200, gateway_token: token }, headers);
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(await second.app.db.selectFrom("in_doubt_references").select("reference").where("connector_id", "=", "mock").execute()).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});
