import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it, inject } from "vitest";
import { openStore } from "../../store/open-store";
import { runCli, type CliResult } from "../support/cli";
import { bootServer, TEST_ENGINE } from "../support/harness";
import { createTestDatabase, dropTestDatabase } from "../support/postgres";
import { auth } from "../support/seed";
import { writeEvent } from "../webhooks/support";

/** exit 1 with one line on stderr that names `what` and no internals. */
function expectOneLine(result: CliResult, ...what: string[]): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  for (const part of what) expect(lines[0]).toContain(part);
  expect(lines[0]).not.toContain("unexpected error");
}

async function tablesIn(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("select count(*)::int as n from information_schema.tables where table_schema = 'public'")).rows[0].n;
  } finally {
    await client.end();
  }
}

/**
 * The CLI against `PAYGATE_DATABASE_URL` / `--database-url`, with no data dir of the
 * test's making: the URL alone says where the store is. Commands run in an empty
 * working directory so no ./paygate-data is found or made by accident.
 */
describe.skipIf(TEST_ENGINE !== "postgres")("the CLI on a PostgreSQL database URL", () => {
  const urls: string[] = [];
  const cwd = mkdtempSync(join(tmpdir(), "paygate-cwd-"));
  const emptyDatabase = async () => {
    const url = await createTestDatabase(inject("postgresAdminUrl"), { empty: true });
    urls.push(url);
    return url;
  };
  const cli = (args: string[], url: string, input?: string) => runCli(args, { env: { PAYGATE_DATABASE_URL: url }, cwd, ...(input === undefined ? {} : { input }) });
  const cliJson = async (args: string[], url: string, input?: string) => {
    const result = await cli([...args, "--json"], url, input);
    expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
    return JSON.parse(result.stdout);
  };
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(inject("postgresAdminUrl"), url);
    rmSync(cwd, { recursive: true, force: true });
  });

  it("refuses a database without paygate's schema with one line naming it and the setting, and creates nothing", async () => {
    const url = await emptyDatabase();
    const name = new URL(url).pathname.slice(1);
    for (const args of [["merchants", "list"], ["webhooks", "list", "--dead"], ["keys", "list", "--merchant", "mrc_x"], ["status"]]) {
      expectOneLine(await cli(args, url), name, "PAYGATE_DATABASE_URL", "paygate migrate");
    }
    expectOneLine(await runCli(["merchants", "list", "--database-url", url], { cwd }), name, "--database-url");
    expect(await tablesIn(url)).toBe(0);
  });

  it("says in one line that it cannot reach the database when nothing answers at the URL", async () => {
    const url = new URL(inject("postgresAdminUrl"));
    url.port = "1";
    expectOneLine(await cli(["merchants", "list"], url.toString()), "cannot reach the PostgreSQL database at 127.0.0.1:1 (PAYGATE_DATABASE_URL): connection refused");
  });

  it("migrates, creates a merchant and a key the server accepts, lists accounts, replays a webhook and shows the status", async () => {
    const url = await emptyDatabase();
    const migrated = await runCli(["migrate", "--database-url", url], { cwd, env: {} });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain("001_init");
    expect((await cli(["migrate"], url)).stdout).toContain("up to date");

    const merchant = await cliJson(["merchants", "create", "--name", "Shop"], url);
    const key = await cliJson(["keys", "create", "--merchant", merchant.id, "--name", "backend"], url);
    expect(key.key).toMatch(/^sk_test_/);
    await cliJson(["secrets", "put", "shop/nmi"], url, "nmi-security-key-pg");
    const account = await cliJson(["accounts", "create", "--merchant", merchant.id, "--connector", "nmi", "--mode", "test", "--key-kind", "security_key", "--label", "n", "--credential-ref", "secret://shop/nmi"], url);
    const accounts = await cliJson(["accounts", "list", "--merchant", merchant.id], url);
    expect(accounts.data.map((a: { id: string }) => a.id)).toContain(account.id);

    const endpoint = await cliJson(["endpoints", "create", "--merchant", merchant.id, "--url", "http://127.0.0.1:1/hook", "--events", "payment.captured"], url);
    const store = openStore({ dataDir: cwd, databaseUrl: url });
    let eventId: string;
    try {
      eventId = (await writeEvent(store.db, merchant.id, "payment.captured")).id;
    } finally {
      await store.close();
    }
    const replayed = await cliJson(["webhooks", "replay", eventId], url);
    expect(replayed.data).toEqual([expect.objectContaining({ event_id: eventId, endpoint_id: endpoint.id })]);

    const status = await cliJson(["status"], url);
    expect(status.database).toContain(new URL(url).pathname);
    expect(status.migrations[0]).toBe("001_init");
    expect(status.counts).toMatchObject({ merchants: 1, api_keys: 1, webhook_endpoints: 1 });

    const server = await bootServer({ env: { PAYGATE_DATABASE_URL: url } });
    try {
      const res = await server.request("/v1/events", { headers: auth(key.key) });
      expect(res.status, await res.clone().text()).toBe(200);
      expect((await res.json()).data.map((e: { id: string }) => e.id)).toContain(eventId);
    } finally {
      await server.stop();
    }
  });

  it("self-check reports the configured PostgreSQL server's version beside the embedded SQLite's, and names an unreachable one", async () => {
    const url = await emptyDatabase();
    for (const result of [await cli(["self-check"], url), await runCli(["self-check", "--database-url", url], { cwd })]) {
      expect(result.code, result.stderr).toBe(0);
      const server = new pg.Client({ connectionString: url });
      await server.connect();
      const { rows } = await server.query("show server_version").finally(() => server.end());
      expect(JSON.parse(result.stdout)).toMatchObject({ sqlite: expect.stringMatching(/^3\./), postgres: rows[0].server_version });
    }
    expect(await tablesIn(url)).toBe(0);
    const unreachable = new URL(url);
    unreachable.port = "1";
    expectOneLine(await cli(["self-check"], unreachable.toString()), "cannot reach the PostgreSQL database");
  });

  it("refuses master-key rotate in one line: every instance would have to stop first", async () => {
    const url = await emptyDatabase();
    expect((await cli(["migrate"], url)).code).toBe(0);
    expectOneLine(await cli(["master-key", "rotate"], url), "PostgreSQL");
  });
});
