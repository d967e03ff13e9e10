import { describe, expect, it } from "vitest";
import type { Actor } from "../../server/keys/actor";
import { assertMayManage, assertMayMint, mayManage } from "../../server/keys/key-authority";
import { SCOPES } from "../../server/keys/scopes";

/**
 * The role half of the rule: admin keys are managed only by admin keys, whatever
 * scopes the caller holds (over HTTP a merchant key never holds `admin`, so the matrix
 * alone cannot tell the role check from the scope check).
 */
describe("key authority", () => {
  const merchantWithEveryScope: Actor = {
    apiKeyId: "key_caller",
    merchantId: "m1",
    merchantShortId: "mrc_0000000001",
    mode: "test",
    role: "merchant",
    keyType: "secret",
    scopes: new Set(SCOPES),
  };
  const adminKey = { merchantId: "m1", mode: "test" as const, role: "admin" as const, scopes: [...SCOPES] };

  it("refuses admin keys to a merchant key even when it holds every scope", () => {
    expect(mayManage(merchantWithEveryScope, adminKey)).toBe(false);
    expect(() => assertMayManage(merchantWithEveryScope, "key_admin", adminKey)).toThrow(expect.objectContaining({ status: 403, code: "insufficient_permissions" }));
    expect(() => assertMayMint(merchantWithEveryScope, adminKey)).toThrow(expect.objectContaining({ status: 403, code: "insufficient_permissions" }));
  });

  it("lets only an admin key mint another merchant's keys", () => {
    const otherMerchantKey = { merchantId: "m2", mode: "test" as const, role: "merchant" as const, scopes: ["keys:read" as const] };
    expect(() => assertMayMint(merchantWithEveryScope, otherMerchantKey)).toThrow(expect.objectContaining({ status: 403, code: "insufficient_permissions" }));
    expect(() => assertMayMint({ ...merchantWithEveryScope, role: "admin" }, otherMerchantKey)).not.toThrow();
  });

  it("gives the CLI (no calling key) full rights", () => {
    expect(() => assertMayManage(undefined, "key_admin", { ...adminKey, mode: "live" })).not.toThrow();
    expect(() => assertMayMint(undefined, { ...adminKey, mode: "live" })).not.toThrow();
  });
});
