/**
 * A follow-on whose process died mid-call (kill -9 after the processor was asked) leaves
 * its claim unsettled. Once the lease runs out, the processor may or may not have moved
 * the money: only the same request's retry (same Idempotency-Key, so the same processor
 * reference) may finish it; every other follow-on is refused, as after a timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processorReference } from "../../server/payments/connector-call";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

describe("a follow-on whose process died mid-call", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(() => server.stop());

  const keyIdOf = async (merchantId: string, key: string) =>
    (await server.app.db.selectFrom("api_keys").select("id").where("merchant_id", "=", merchantId).where("last4", "=", key.slice(-4)).where("role", "!=", "admin").executeTakeFirstOrThrow()).id;

  /** The claim a dead process left: taken for `key`'s refund, its lease over `agoMs` ago, never settled nor released. */
  async function leaveLapsedClaim(paymentId: string, apiKeyId: string, key: string, amount: number, agoMs: number): Promise<void> {
    const reference = processorReference({ apiKeyId } as Parameters<typeof processorReference>[0], key, "refund", paymentId);
    await server.app.db
      .updateTable("payments")
      .set({ pending_operation: "refund", pending_amount: amount, pending_request: reference, pending_until: Date.now() - agoMs, pending_in_doubt: 0 })
      .where("id", "=", paymentId)
      .execute();
  }

  it("refuses every other follow-on after the lease, and lets the same key's retry finish it once", async () => {
    const m = await seedSandboxMerchant(server, "Crashed follow-on");
    const client = paymentsClient(server, m.secret);
    const sale = await client.sale({ amount: 5000, gateway_token: await client.token() }, { "idempotency-key": "cr-sale" });
    expect(sale.status).toBe(201);
    const paymentId = (await sale.json()).id as string;
    const apiKeyId = await keyIdOf(m.merchant.id, m.secret);
    await leaveLapsedClaim(paymentId, apiKeyId, "cr-refund-1", 3000, 1000);

    const other = await client.refund({ payment_id: paymentId, amount: 3000 }, { "idempotency-key": "cr-refund-2" });
    expect(other.status).toBe(409);
    const body = await other.json();
    expect(body.error.code).toBe("conflict");
    expect(body.error.message).toMatch(/got no answer from the processor/);
    expect(other.headers.get("retry-after")).toBe("60");
    const voided = await client.void({ payment_id: paymentId }, { "idempotency-key": "cr-void" });
    expect(voided.status).toBe(409);

    const retried = await client.refund({ payment_id: paymentId, amount: 3000 }, { "idempotency-key": "cr-refund-1" });
    expect(retried.status).toBe(200);
    expect((await retried.json()).amount_refunded).toBe(3000);
    const refunds = await server.app.db.selectFrom("refunds").select("amount").where("payment_id", "=", paymentId).execute();
    expect(refunds.map((r) => r.amount)).toEqual([3000]);

    const next = await client.refund({ payment_id: paymentId, amount: 2000 }, { "idempotency-key": "cr-refund-3" });
    expect(next.status).toBe(200);
  });

  it("frees the payment for others once the in-doubt hold (24 h past the lease) is over", async () => {
    const m = await seedSandboxMerchant(server, "Crashed follow-on, old");
    const client = paymentsClient(server, m.secret);
    const sale = await client.sale({ amount: 5000, gateway_token: await client.token() }, { "idempotency-key": "cr-old-sale" });
    const paymentId = (await sale.json()).id as string;
    const apiKeyId = await keyIdOf(m.merchant.id, m.secret);
    await leaveLapsedClaim(paymentId, apiKeyId, "cr-old-refund-1", 3000, 24 * 60 * 60 * 1000 + 1000);
    const other = await client.refund({ payment_id: paymentId, amount: 3000 }, { "idempotency-key": "cr-old-refund-2" });
    expect(other.status).toBe(200);
  });
});
