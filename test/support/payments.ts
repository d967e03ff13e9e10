import type { TestServer } from "./harness";
import { auth, seedMerchant, type SeededMerchant } from "./seed";
import { seedSandboxAccount } from "../../server/accounts/seed-sandbox-account";
import { getMerchant } from "../../server/merchants/merchants";
import { futureExpiry } from "./expiry";

export const CARDS = {
  approved: "4242424242424242",
  generic_decline: "4000000000000002",
  insufficient_funds: "4000000000009995",
  expired_card: "4000000000000069",
  incorrect_cvc: "4000000000000127",
} as const;

/** A test-mode merchant with keys and its default sandbox `mock` account. */
export async function seedSandboxMerchant(server: TestServer, name = "Shop"): Promise<SeededMerchant & { accountId: string; accountShortId: string }> {
  const seeded = await seedMerchant(server, name);
  const account = await seedSandboxAccount(server.app, await getMerchant(server.app.db, seeded.merchant.id));
  return { ...seeded, accountId: account.id, accountShortId: account.short_id };
}

/** Small client for one merchant key against a test server. */
export function paymentsClient(server: TestServer, key: string) {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    server.request(path, { method: "POST", headers: { ...auth(key), ...headers }, json: body });
  return {
    post,
    async token(number: string = CARDS.approved): Promise<string> {
      const res = await post("/v1/tokens", { card: { number, ...futureExpiry(), cvc: "123" } });
      if (res.status !== 201) throw new Error(`tokenize failed: ${res.status} ${await res.text()}`);
      return (await res.json()).token;
    },
    authorize: (body: Record<string, unknown>, headers?: Record<string, string>) => post("/v1/payments/authorize", { currency: "usd", ...body }, headers),
    sale: (body: Record<string, unknown>, headers?: Record<string, string>) => post("/v1/payments/sale", { currency: "usd", ...body }, headers),
    capture: (body: Record<string, unknown>, headers?: Record<string, string>) => post("/v1/payments/capture", body, headers),
    refund: (body: Record<string, unknown>, headers?: Record<string, string>) => post("/v1/payments/refund", body, headers),
    void: (body: Record<string, unknown>, headers?: Record<string, string>) => post("/v1/payments/void", body, headers),
    get: (id: string) => server.request(`/v1/payments/${id}`, { headers: auth(key) }),
    list: (query = "") => server.request(`/v1/payments${query}`, { headers: auth(key) }),
  };
}
