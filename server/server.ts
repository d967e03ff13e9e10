import { toNodeHandler } from "h3";
import type { AppContext } from "./app-context";
import { MemoryCache } from "./cache/memory-cache";
import type { Config } from "./config";
import { healthRoutes } from "./health/routes";
import { listenOn, type Listening } from "./http/listen";
import { createRouter } from "./http/router";
import type { Route } from "./http/route";
import { createLogger, type Logger } from "./logger";
import { migrate, openStore } from "../store/database";

/** How long shutdown waits for in-flight requests before closing their sockets. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  port: number;
  app: AppContext;
  /** Stops accepting, lets in-flight requests finish (10 s at most), closes the store. */
  close(): Promise<void>;
}

/** Every route of the API. */
export function allRoutes(app: AppContext): Route[] {
  return [...healthRoutes(app)];
}

/** Opens the store, applies migrations, and wires the process-wide dependencies. */
export async function createAppContext(config: Config, log: Logger = createLogger(config.logLevel)): Promise<AppContext> {
  const store = openStore(config.dataDir);
  await migrate(store.db);
  return { config, store, db: store.db, cache: new MemoryCache(), log };
}

export interface StartOptions {
  log?: Logger;
  /** The routes to serve. @default allRoutes */
  routes?: (app: AppContext) => Route[];
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const app = await createAppContext(config, options.log);
  const h3 = createRouter(app, (options.routes ?? allRoutes)(app));
  let listening: Listening;
  try {
    listening = await listenOn(toNodeHandler(h3), config.host, config.port);
  } catch (error) {
    await app.store.close();
    throw error;
  }
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= listening.close(SHUTDOWN_GRACE_MS).then(() => app.store.close());
    return closing;
  };
  return { url: `http://${host}:${listening.port}`, port: listening.port, app, close };
}
