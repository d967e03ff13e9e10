import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config";

describe("configuration", () => {
  it("defaults to the values the spec and contract fix", () => {
    const config = loadConfig({}, {});
    expect(config.webhookRetryScheduleMs).toEqual([60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 24 * 3_600_000]);
    expect(config.webhookTimeoutMs).toBe(30_000);
    expect(config.idempotencyTtlMs).toBe(72 * 3_600_000);
    expect(config.rateLimit).toEqual({ perSecond: 100, burst: 200 });
    expect(config.connectorTimeoutMs).toBe(30_000);
    expect(config).toMatchObject({ host: "127.0.0.1", port: 8080, logLevel: "info", devMode: false, dataDir: resolve("paygate-data") });
  });

  it("reads each setting from the environment", () => {
    const config = loadConfig(
      {},
      {
        PAYGATE_DATA_DIR: "/tmp/env-data",
        PAYGATE_HOST: "::1",
        PAYGATE_PORT: "9090",
        PAYGATE_LOG_LEVEL: "warn",
        PAYGATE_DEV_MODE: "1",
        PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1s,2s",
        PAYGATE_WEBHOOK_TIMEOUT: "5s",
        PAYGATE_IDEMPOTENCY_TTL: "24h",
        PAYGATE_RATE_LIMIT: "10:15",
      },
    );
    expect(config).toMatchObject({
      dataDir: "/tmp/env-data",
      host: "::1",
      port: 9090,
      logLevel: "warn",
      devMode: true,
      webhookRetryScheduleMs: [1000, 2000],
      webhookTimeoutMs: 5000,
      idempotencyTtlMs: 24 * 3_600_000,
      rateLimit: { perSecond: 10, burst: 15 },
    });
    expect(loadConfig({}, { PAYGATE_RATE_LIMIT: "0" }).rateLimit).toBeUndefined();
  });

  it("lets flags win over the environment", () => {
    const env = { PAYGATE_DATA_DIR: "/tmp/env-data", PAYGATE_HOST: "127.0.0.2", PAYGATE_PORT: "9090", PAYGATE_LOG_LEVEL: "warn" };
    const config = loadConfig({ data: "/tmp/flag-data", host: "127.0.0.3", port: 0, logLevel: "error", dev: true }, env);
    expect(config).toMatchObject({ dataDir: "/tmp/flag-data", host: "127.0.0.3", port: 0, logLevel: "error", devMode: true });
  });

  it("names the flag, not the variable, when a flag's value is bad", () => {
    expect(() => loadConfig({ port: "x" }, { PAYGATE_PORT: "8080" })).toThrow(/--port/);
    expect(() => loadConfig({ logLevel: "loud" }, {})).toThrow(/--log-level/);
    expect(() => loadConfig({}, { PAYGATE_PORT: "x" })).toThrow(/PAYGATE_PORT/);
  });

  it("selects PostgreSQL by URL (flag over environment), with a pool of 10 unless set, and only with PAYGATE_MASTER_KEY", () => {
    const key = { PAYGATE_MASTER_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(loadConfig({}, key)).toMatchObject({ databaseUrl: undefined, databasePoolSize: 10 });
    const url = "postgres://paygate@db.internal:5432/paygate";
    expect(loadConfig({}, { ...key, PAYGATE_DATABASE_URL: url, PAYGATE_DATABASE_POOL_SIZE: "25" })).toMatchObject({ databaseUrl: url, databasePoolSize: 25 });
    expect(loadConfig({ databaseUrl: `${url}2` }, { ...key, PAYGATE_DATABASE_URL: url }).databaseUrl).toBe(`${url}2`);
    expect(() => loadConfig({}, { PAYGATE_DATABASE_URL: url })).toThrow(/PAYGATE_MASTER_KEY: is required with PostgreSQL/);
    expect(() => loadConfig({ databaseUrl: "mysql://x" }, key)).toThrow(/--database-url/);
    expect(() => loadConfig({}, { ...key, PAYGATE_DATABASE_URL: url, PAYGATE_DATABASE_POOL_SIZE: "0" })).toThrow(/PAYGATE_DATABASE_POOL_SIZE/);
  });
});

describe("production environment", () => {
  it("is recognized whatever its case or surrounding space, so dev mode can never start in it", () => {
    for (const value of ["production", "Production", "PRODUCTION", " production "]) {
      expect(loadConfig({}, { PAYGATE_ENV: value }).environment, value).toBe("production");
      expect(loadConfig({}, { NODE_ENV: value }).environment, value).toBe("production");
    }
    expect(loadConfig({}, { PAYGATE_ENV: "staging" }).environment).toBe("development");
  });
});
