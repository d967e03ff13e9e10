import { describe, expect, it } from "vitest";
import type { ConnectorAccount } from "../../server/accounts/connector-account";
import { resolveAccount, type ResolutionRequest } from "../../server/accounts/resolve-account";
import { ApiError } from "../../server/errors";

let n = 0;
function account(overrides: Partial<ConnectorAccount> = {}): ConnectorAccount {
  n += 1;
  const suffix = String(n).padStart(10, "0");
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    object: "connector_account",
    short_id: `ca_${suffix}`,
    merchant_id: "m",
    merchant_short_id: "mrc_0000000000",
    connector_id: "mock",
    mode: "test",
    key_kind: "api_key",
    label: `label-${n}`,
    is_default: false,
    credential_ref: "secret://x",
    is_active: true,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
}

const mockDefault = account({ is_default: true });
const mockOther = account();
const stripeTest = account({ connector_id: "stripe" });
const inactive = account({ is_active: false });
const liveStripe = account({ connector_id: "stripe", mode: "live" });
const liveNmi = account({ connector_id: "nmi", mode: "live", key_kind: "security_key" });
const stripeA = account({ connector_id: "stripe" });
const stripeB = account({ connector_id: "stripe" });

const base: ResolutionRequest = {
  mode: "test",
  routed: undefined,
  bodySelector: undefined,
  headerSelector: undefined,
  accounts: [mockDefault, mockOther, stripeTest, inactive, liveStripe],
  callerIsOwner: true,
};

type Expectation = { account: ConnectorAccount } | { status: number; code: string; available?: string[] | "absent" };

/** Every rule of the spec's "Connector account resolution", one row at least each. */
const CASES: Array<[string, Partial<ResolutionRequest>, Expectation]> = [
  ["rule 1: body and header equal proceeds", { bodySelector: mockOther.short_id, headerSelector: mockOther.short_id }, { account: mockOther }],
  ["rule 1: equal UUIDs in different case proceed", { bodySelector: mockOther.id.toUpperCase(), headerSelector: mockOther.id }, { account: mockOther }],
  ["rule 1: body and header differ", { bodySelector: mockOther.short_id, headerSelector: mockDefault.short_id }, { status: 400, code: "connector_account_ambiguous" }],
  ["rule 2: neither short_id nor UUID", { bodySelector: "acct_123" }, { status: 400, code: "invalid_connector_account" }],
  ["rule 2: short id with uppercase is invalid", { headerSelector: "ca_ABCDEFGHIJ" }, { status: 400, code: "invalid_connector_account" }],
  ["rule 2: UUID not canonical", { bodySelector: "0000000000004000800000000000000a" }, { status: 400, code: "invalid_connector_account" }],
  ["rule 2: header alone is a selector", { headerSelector: mockOther.short_id }, { account: mockOther }],
  ["rule 2: selector by UUID", { bodySelector: mockOther.id }, { account: mockOther }],
  ["rule 3: no selector uses the default of the routed connector", {}, { account: mockDefault }],
  ["rule 3: no selector, explicit connector with one account", { routed: "stripe", accounts: [mockDefault, stripeTest] }, { account: stripeTest }],
  ["rule 4: zero active accounts", { accounts: [inactive] }, { status: 400, code: "connector_account_required", available: "absent" }],
  ["rule 4: zero accounts at all", { accounts: [] }, { status: 400, code: "connector_account_required", available: "absent" }],
  [
    "rule 4: several, none default: available_accounts for the owner",
    { routed: "stripe", accounts: [stripeA, stripeB] },
    { status: 400, code: "connector_account_required", available: [stripeA.short_id, stripeB.short_id] },
  ],
  [
    "rule 4: available_accounts never shown to a non-owner",
    { routed: "stripe", accounts: [stripeA, stripeB], callerIsOwner: false },
    { status: 400, code: "connector_account_required", available: "absent" },
  ],
  ["rule 5 (decided): one active account is used without a default", { accounts: [mockOther] }, { account: mockOther }],
  ["rule 5 (decided): several with one default uses the default", { accounts: [mockOther, mockDefault] }, { account: mockDefault }],
  [
    "rule 5 (decided): defaults of several key kinds is not one default",
    { routed: "stripe", accounts: [account({ connector_id: "stripe", is_default: true }), account({ connector_id: "stripe", key_kind: "other", is_default: true })] },
    { status: 400, code: "connector_account_required" },
  ],
  ["rule 6: unknown account", { bodySelector: "ca_zzzzzzzzzz" }, { status: 404, code: "connector_account_not_found" }],
  ["rule 6: another merchant's account looks unknown", { bodySelector: mockOther.short_id, callerIsOwner: false }, { status: 404, code: "connector_account_not_found" }],
  ["rule 7: inactive account", { bodySelector: inactive.short_id }, { status: 409, code: "connector_account_inactive" }],
  ["rule 7: account on another connector than the routed one", { routed: "mock", bodySelector: stripeTest.short_id }, { status: 409, code: "connector_account_mismatch" }],
  ["sandbox rule 3: test key, no routing routes to mock, so a stripe selector mismatches", { bodySelector: stripeTest.short_id }, { status: 409, code: "connector_account_mismatch" }],
  ["sandbox rule 3: test key, no routing, a stripe selector with connector stripe", { routed: "stripe", bodySelector: stripeTest.short_id }, { account: stripeTest }],
  ["sandbox rule 3: test key, no routing, a mock selector", { bodySelector: mockOther.short_id }, { account: mockOther }],
  ["live key, no routing (decided): the selected account's connector is used", { mode: "live", bodySelector: liveNmi.short_id, accounts: [liveStripe, liveNmi] }, { account: liveNmi }],
  ["rule 7: account of the other mode", { bodySelector: liveStripe.short_id }, { status: 409, code: "connector_account_mode_mismatch" }],
  ["rule 7 (decided): another mode is reported before another connector", { routed: "mock", bodySelector: liveStripe.short_id }, { status: 409, code: "connector_account_mode_mismatch" }],
  ["rule 8: follow-on inherits the origin", { origin: stripeTest }, { account: stripeTest }],
  ["rule 8: follow-on repeating the origin proceeds", { origin: stripeTest, bodySelector: stripeTest.id }, { account: stripeTest }],
  ["rule 8: follow-on naming another account", { origin: stripeTest, bodySelector: mockDefault.short_id }, { status: 400, code: "connector_account_override_forbidden" }],
  ["rule 8: follow-on ambiguity is still rule 1", { origin: stripeTest, bodySelector: stripeTest.short_id, headerSelector: mockDefault.short_id }, { status: 400, code: "connector_account_ambiguous" }],
  ["rule 9: origin deactivated", { origin: { ...stripeTest, is_active: false } }, { status: 409, code: "conflict" }],
  ["rule 9: origin gone", { origin: null }, { status: 409, code: "conflict" }],
  ["rule 11: live mode, one connector with accounts", { mode: "live", accounts: [liveStripe, mockDefault] }, { account: liveStripe }],
  ["rule 11: live mode, no live account", { mode: "live", accounts: [mockDefault] }, { status: 400, code: "connector_account_required" }],
  ["rule 11: live mode, two connectors and no routing", { mode: "live", accounts: [liveStripe, liveNmi] }, { status: 400, code: "connector_account_required" }],
  ["rule 11: live mode routed to a connector without accounts", { mode: "live", routed: "tsys", accounts: [liveStripe] }, { status: 400, code: "connector_account_required" }],
];

describe("resolveAccount", () => {
  it.each(CASES)("%s", (_name, overrides, expectation) => {
    const request = { ...base, ...overrides };
    if ("account" in expectation) {
      expect(resolveAccount(request).id).toBe(expectation.account.id);
      return;
    }
    let thrown: unknown;
    try {
      resolveAccount(request);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect({ status: error.status, code: error.code }).toEqual({ status: expectation.status, code: expectation.code });
    if (error.code.startsWith("connector_account") || error.code === "invalid_connector_account") expect(error.details.param).toBe("connector_account");
    if (expectation.available === "absent") expect(error.details.available_accounts).toBeUndefined();
    else if (expectation.available) expect(error.details.available_accounts?.map((a) => a.short_id)).toEqual(expectation.available);
  });

  it("types connector_account_required as invalid_request_error", () => {
    try {
      resolveAccount({ ...base, accounts: [] });
    } catch (error) {
      expect((error as ApiError).type).toBe("invalid_request_error");
    }
    expect.assertions(1);
  });
});
