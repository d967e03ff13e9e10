import { expect } from "vitest";
import type { TestResponse } from "./harness";

/**
 * Asserts an error answer by its status and the spec's `code` (a status alone passes
 * for the wrong error), in the envelope whose request_id is the X-Request-Id header.
 */
export async function expectError(res: TestResponse | Response, status: number, code: string): Promise<Record<string, unknown>> {
  expect(res.status, `expected ${status} ${code}`).toBe(status);
  const { error } = (await res.json()) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ code, request_id: res.headers.get("x-request-id") });
  return error;
}
