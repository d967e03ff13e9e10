/**
 * Every instance collects its keys' `last_used_at` in memory and flushes it in batches:
 * a batch from an instance that saw an older use must not move the time back.
 */
import { describe, expect, it } from "vitest";
import { findApiKey, touchApiKeys } from "../../store/api-keys";
import { bootServer } from "../support/harness";
import { seedMerchant } from "../support/seed";

describe("last_used_at flushed by several instances", () => {
  it("keeps the newest use whatever order the flushes land in", async () => {
    const server = await bootServer();
    try {
      const m = await seedMerchant(server);
      const newer = "2030-01-01T00:00:02.000Z";
      await touchApiKeys(server.app.db, new Map([[m.secretId, newer]]));
      await touchApiKeys(server.app.db, new Map([[m.secretId, "2030-01-01T00:00:01.000Z"]]));
      expect((await findApiKey(server.app.db, m.merchant.id, m.secretId))?.last_used_at).toBe(newer);
      const newest = "2030-01-01T00:00:03.000Z";
      await touchApiKeys(server.app.db, new Map([[m.secretId, newest]]));
      expect((await findApiKey(server.app.db, m.merchant.id, m.secretId))?.last_used_at).toBe(newest);
    } finally {
      await server.stop();
    }
  });
});
