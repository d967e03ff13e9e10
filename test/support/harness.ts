import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../server/config";
import { createLoggers } from "../../server/logger";
import { startServer, type RunningServer, type StartOptions } from "../../server/server";

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
  const config = loadConfig({ port: 0, data: dataDir, dev: options.dev }, testEnv(options.env));
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
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
