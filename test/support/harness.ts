import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../server/config";
import { createLoggers } from "../../server/logger";
import { startServer, type RunningServer, type StartOptions } from "../../server/server";
import { inject } from "vitest";
import { createTestDatabase, dropTestDatabase } from "./postgres";

/** The engine this vitest project runs every test on (vitest.config.mts sets it). */
export const TEST_ENGINE: "sqlite" | "postgres" = process.env.PAYGATE_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

/** Where a data dir's PostgreSQL database is named, so a server restarted on that dir finds its data. */
const DATABASE_URL_FILE = "test-database-url";

/**
 * The store settings for a test's data dir: nothing more on SQLite; on PostgreSQL a
 * fresh database of its own, made the first time the dir is used.
 */
export async function engineEnv(dataDir: string): Promise<Record<string, string>> {
  if (TEST_ENGINE === "sqlite") return {};
  const file = join(dataDir, DATABASE_URL_FILE);
  if (!existsSync(file)) writeFileSync(file, await createTestDatabase(inject("postgresAdminUrl")));
  return { PAYGATE_DATABASE_URL: readFileSync(file, "utf8") };
}

/**
 * Gives a data dir that has no database yet an empty one on PostgreSQL (no schema), as
 * a fresh SQLite data dir is, for tests of what creates or refuses a store. Returns its
 * URL, or undefined on SQLite.
 */
export async function emptyEngineData(dataDir: string): Promise<string | undefined> {
  if (TEST_ENGINE === "sqlite") return undefined;
  const file = join(dataDir, DATABASE_URL_FILE);
  if (existsSync(file)) throw new Error(`${dataDir} already has a database`);
  const url = await createTestDatabase(inject("postgresAdminUrl"), { empty: true });
  writeFileSync(file, url);
  return url;
}

/** Drops the data dir's PostgreSQL database, if it has one. */
export async function dropEngineData(dataDir: string): Promise<void> {
  const file = join(dataDir, DATABASE_URL_FILE);
  if (TEST_ENGINE === "postgres" && existsSync(file)) await dropTestDatabase(inject("postgresAdminUrl"), readFileSync(file, "utf8"));
}

/** A fetch Response whose `json()` is typed loosely, for assertions. */
export type TestResponse = Omit<Response, "json"> & { json(): Promise<any> };

export interface TestServer extends RunningServer {
  dataDir: string;
  /** Everything the server logged so far. */
  readLog(): string;
  /** Sends a request to the server; `json` is serialized as the body. */
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<TestResponse>;
  stop(): Promise<void>;
}

export function freshDataDir(): string {
  return mkdtempSync(join(tmpdir(), "paygate-test-"));
}

/** Test defaults: quiet rate limit, a fixed master key, nothing from the outer env. */
export function testEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PAYGATE_RATE_LIMIT: "0",
    PAYGATE_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
    ...extra,
  };
}

/** Boots the real server on a free loopback port with a fresh data dir. */
export async function bootServer(
  options: { env?: Record<string, string>; dataDir?: string; dev?: boolean } & Pick<StartOptions, "routes"> = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? freshDataDir();
  const logFile = join(dataDir, "server.log");
  const config = loadConfig({ port: 0, data: dataDir, dev: options.dev }, testEnv({ ...(await engineEnv(dataDir)), ...options.env }));
  // Synchronous, so a test reads every line of the requests it made.
  const loggers = createLoggers("info", openSync(logFile, "a"), { sync: true });
  const server = await startServer(config, { loggers, routes: options.routes });
  return {
    ...server,
    dataDir,
    readLog: () => readFileSync(logFile, "utf8"),
    request(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set("content-type", "application/json");
      return fetch(server.url + path, { ...rest, headers, body: json === undefined ? rest.body : JSON.stringify(json) });
    },
    async stop() {
      await server.close();
      await dropEngineData(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
