import { describe, expect, it } from "vitest";
import { isStorable } from "../../server/http/idempotency";

/** Which answers an Idempotency-Key keeps for replay (CONTRACT §3), one row per case. */
const ANSWERS: Array<[string, number, string | undefined, boolean, boolean]> = [
  ["201 created", 201, undefined, true, true],
  ["200 follow-on", 200, undefined, true, true],
  ["204 deleted", 204, undefined, true, true],
  ["200 produced outside a commit (webhook test delivery)", 200, undefined, false, true],
  ["404 not found", 404, "payment_intent_not_found", false, true],
  ["409 invalid_state_transition", 409, "invalid_state_transition", false, true],
  ["409 conflict", 409, "conflict", false, true],
  ["409 idempotency_conflict: the key belongs to another request", 409, "idempotency_conflict", false, false],
  ["409 idempotency_key_reused: read from the payment itself, and kept would bind the key to a stray request's parameters", 409, "idempotency_key_reused", false, false],
  ["502 decline committed with its failed payment", 502, "connector_error", true, true],
  ["502 processor error before anything was written", 502, "connector_error", false, false],
  ["400 validation: fixable, retry the same key", 400, "parameter_invalid", false, false],
  ["400 missing parameter", 400, "parameter_missing", false, false],
  ["401 authentication", 401, "invalid_api_key", false, false],
  ["403 scope", 403, "insufficient_permissions", false, false],
  ["413 too large", 413, "payload_too_large", false, false],
  ["422 idempotency_param_mismatch", 422, "idempotency_param_mismatch", false, false],
  ["429 rate limited", 429, "rate_limit_exceeded", false, false],
  ["500 unexpected", 500, "api_error", false, false],
  ["504 connector_timeout: the retry re-asks the processor", 504, "connector_timeout", false, false],
];

describe("isStorable", () => {
  it.each(ANSWERS)("%s (status %i, code %s, committed %s) → kept: %s", (_name, status, code, committed, kept) => {
    expect(isStorable(status, code, committed)).toBe(kept);
  });
});
