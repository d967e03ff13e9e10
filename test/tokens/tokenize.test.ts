import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { CARDS } from "../support/payments";
import { futureExpiry } from "../support/expiry";
import { expectStored, storedData } from "../support/raw-files";

describe("tokenization", () => {
  let server: TestServer;
  let m: SeededMerchant;
  const year = futureExpiry().exp_year;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  const tokenize = (card: Record<string, unknown>, key = m.publishable) => server.request("/v1/tokens", { method: "POST", headers: auth(key), json: { card } });

  it("exchanges each test card for a tok_test_ token with a publishable or a secret key", async () => {
    for (const number of Object.values(CARDS)) {
      const res = await tokenize({ number, exp_month: 1, exp_year: year, cvc: "987", zip: "94107" });
      expect(res.status).toBe(201);
      const token = await res.json();
      expect(token).toEqual({
        token: expect.stringMatching(/^tok_test_[a-z0-9]{24}$/),
        object: "card_token",
        bin_prefix: number.slice(0, 6),
        last4: number.slice(-4),
        exp_month: 1,
        exp_year: year,
        card_brand: "visa",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    }
    expect((await tokenize({ number: CARDS.approved, exp_month: 1, exp_year: year, cvc: "123" }, m.secret)).status).toBe(201);
  });

  it("refuses real card numbers in test mode", async () => {
    const res = await tokenize({ number: "5555555555554444", exp_month: 1, exp_year: year, cvc: "123" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: "test_card_required", param: "card[number]" });
  });

  it.each([
    [{ number: "4242424242424241", exp_month: 1, exp_year: year, cvc: "123" }, "card[number]"],
    [{ number: "42424242", exp_month: 1, exp_year: year, cvc: "123" }, "card[number]"],
    [{ number: "4242x42424242424", exp_month: 1, exp_year: year, cvc: "123" }, "card[number]"],
    [{ number: "4242424242424242", exp_month: 13, exp_year: year, cvc: "123" }, "card[exp_month]"],
    [{ number: "4242424242424242", exp_month: 1, exp_year: 2001, cvc: "123" }, "card[exp_year]"],
    [{ number: "4242424242424242", exp_month: 1, exp_year: year, cvc: "12" }, "card[cvc]"],
    [{ number: "4242424242424242", exp_month: 1, exp_year: year, cvc: "1234" }, "card[cvc]"],
    [{ number: "4242424242424242", exp_month: 1, exp_year: year, cvc: "123", zip: "941" }, "card[zip]"],
  ])("refuses %o naming %s", async (card, param) => {
    const res = await tokenize(card);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: "parameter_invalid", param });
  });

  it("names missing and unknown card fields", async () => {
    const missing = await (await tokenize({ number: CARDS.approved, exp_month: 1, exp_year: year })).json();
    expect(missing.error).toMatchObject({ code: "parameter_missing", param: "card[cvc]" });
    const unknown = await (await tokenize({ number: CARDS.approved, exp_month: 1, exp_year: year, cvc: "123", pin: "0000" })).json();
    expect(unknown.error).toMatchObject({ code: "parameter_unknown", param: "card[pin]" });
  });

  it("never stores or logs the card number or the CVC", async () => {
    const first = await (await tokenize({ number: "4000 0000 0000 9995", exp_month: 2, exp_year: year, cvc: "468" })).json();
    const second = await (await tokenize({ number: "4242424242424242", exp_month: 2, exp_year: year, cvc: "135" })).json();
    await tokenize({ number: "4242424242424241", exp_month: 2, exp_year: year, cvc: "246" });
    const stored = (await storedData(server.dataDir));
    expectStored(stored, first.token, second.token);
    const everything = stored + server.readLog();
    for (const pan of Object.values(CARDS)) expect(everything).not.toContain(pan);
    expect(everything).not.toContain("4242424242424241");
    expect(everything).not.toContain("4000 0000 0000 9995");
    for (const cvc of ["468", "135", "246"]) expect(everything).not.toMatch(new RegExp(`cvc\\W{0,4}${cvc}`));
  });
});
