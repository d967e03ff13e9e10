/**
 * The processor approved a follow-on, then paygate could not record it: the money moved,
 * so no other request may move it again; only the same request's retry, which re-asks
 * the processor with the same reference, may finish it.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, TEST_ENGINE, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

const FAILING_REASON = "fail the commit";

/** Makes the refund insert fail inside the follow-on's commit, on either engine. */
async function failRefundInserts(server: TestServer): Promise<void> {
  if (TEST_ENGINE === "postgres") {
    await sql`create function paygate_test_fail_refund() returns trigger language plpgsql as $$
      begin
        if new.reason = ${sql.lit(FAILING_REASON)} then raise exception 'forced failure'; end if;
        return new;
      end $$`.execute(server.app.db);
    await sql`create trigger paygate_test_fail_refund before insert on refunds for each row execute function paygate_test_fail_refund()`.execute(server.app.db);
  } else {
    await sql`create trigger paygate_test_fail_refund before insert on refunds when new.reason = ${sql.lit(FAILING_REASON)}
      begin select raise(abort, 'forced failure'); end`.execute(server.app.db);
  }
}

async function allowRefundInserts(server: TestServer): Promise<void> {
  await sql`drop trigger paygate_test_fail_refund${sql.raw(TEST_ENGINE === "postgres" ? " on refunds" : "")}`.execute(server.app.db);
}

describe("an approved refund whose commit fails", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(() => server.stop());

  it("holds the claim in doubt for its own retry, which records it once; another key cannot refund meanwhile", async () => {
    const m = await seedSandboxMerchant(server, "Commit failure");
    const client = paymentsClient(server, m.secret);
    const sale = await client.sale({ amount: 2500, gateway_token: await client.token() }, { "idempotency-key": "cf-sale" });
    expect(sale.status).toBe(201);
    const paymentId = (await sale.json()).id as string;

    await failRefundInserts(server);
    const failed = await client.refund({ payment_id: paymentId, amount: 2500, reason: FAILING_REASON }, { "idempotency-key": "cf-refund-1" });
    expect(failed.status).toBe(500);
    const held = await server.app.db.selectFrom("payments").select(["pending_in_doubt", "pending_until", "amount_refunded"]).where("id", "=", paymentId).executeTakeFirstOrThrow();
    expect(held.amount_refunded).toBe(0);
    expect(held.pending_in_doubt).toBe(1);
    expect(Number(held.pending_until)).toBeGreaterThan(Date.now() + 60 * 60 * 1000);

    const other = await client.refund({ payment_id: paymentId, amount: 1000 }, { "idempotency-key": "cf-refund-2" });
    expect(other.status).toBe(409);

    await allowRefundInserts(server);
    const retried = await client.refund({ payment_id: paymentId, amount: 2500, reason: FAILING_REASON }, { "idempotency-key": "cf-refund-1" });
    expect(retried.status).toBe(200);
    expect((await retried.json()).amount_refunded).toBe(2500);
    const after = await client.refund({ payment_id: paymentId, amount: 1000 }, { "idempotency-key": "cf-refund-3" });
    expect(after.status).toBeGreaterThanOrEqual(400);
    const refunds = await server.app.db.selectFrom("refunds").select("amount").where("payment_id", "=", paymentId).execute();
    expect(refunds.map((r) => r.amount)).toEqual([2500]);
  });
});
