import { toNodeHandler, type NodeHandler } from "h3";
import type { AppContext } from "./app-context";
import { MemoryCache } from "./cache/memory-cache";
import type { Config } from "./config";
import { accountRoutes } from "./accounts/routes";
import { seedSandboxAccount } from "./accounts/seed-sandbox-account";
import { paymentRoutes } from "./payments/routes";
import { routingRoutes } from "./routing/routes";
import { tokenRoutes } from "./tokens/routes";
import { assertDevModeAllowed, devModeActor, type DevSeeder } from "./dev-mode";
import { healthRoutes } from "./health/routes";
import { scheduleIdempotencyPurge } from "./jobs/idempotency-purge";
import { Authenticator } from "./keys/authenticator";
import { keyRoutes } from "./keys/routes";
import { merchantRoutes } from "./merchants/routes";
import { Cipher } from "./secrets/cipher";
import { loadMasterKey } from "./secrets/master-key";
import { webhookRoutes } from "./webhooks/routes";
import { NO_DELIVERY, startWebhookDelivery } from "./webhooks/service";
import { listenOn } from "./http/listen";
import { createRouter } from "./http/router";
import type { Route } from "./http/route";
import { createLoggers, type Loggers } from "./logger";
import { migrate, openStore } from "../store/database";
import { GroupCommit } from "../store/group-commit";

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
  return [...healthRoutes(app), ...merchantRoutes(app), ...keyRoutes(app), ...accountRoutes(app), ...routingRoutes(app), ...tokenRoutes(app), ...paymentRoutes(app), ...webhookRoutes(app)];
}

/** What dev mode seeds for its merchant besides the merchant and key. */
const DEV_SEEDERS: DevSeeder[] = [seedSandboxAccount];

/** Opens the store, applies migrations, and wires the process-wide dependencies. */
export async function createAppContext(config: Config, loggers: Loggers = createLoggers(config.logLevel)): Promise<AppContext> {
  const store = openStore(config.dataDir, { busyTimeoutMs: config.busyTimeoutMs });
  await migrate(store.db);
  const cache = new MemoryCache();
  const cipher = new Cipher(loadMasterKey(config));
  const devActor = config.devMode ? await devModeActor({ db: store.db, cipher }, DEV_SEEDERS) : undefined;
  const { log, requests: requestLog } = loggers;
  const auth = new Authenticator(store.db, store, cache, log, devActor);
  const writes = new GroupCommit(store.db);
  return { config, store, db: store.db, writes, cache, log, requestLog, auth, cipher, webhooks: NO_DELIVERY, closers: [() => auth.close()] };
}

/** Runs the shutdown hooks, then closes the database. */
export async function closeAppContext(app: AppContext): Promise<void> {
  for (const close of app.closers) {
    await close().catch((error: unknown) => app.log.error({ err: error }, "shutdown step failed"));
  }
  await app.store.close();
  app.log.flush();
}

export interface StartOptions {
  loggers?: Loggers;
  /** The routes to serve. @default allRoutes */
  routes?: (app: AppContext) => Route[];
}

/**
 * Binds the port first, so a failed start (port taken) creates nothing in the data
 * dir; requests that arrive before the app is ready wait for it. Resolves once ready.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  if (config.devMode) assertDevModeAllowed(config);
  let serve: NodeHandler | undefined;
  let ready!: (handler: NodeHandler) => void;
  const whenReady = new Promise<NodeHandler>((resolve) => (ready = resolve));
  // Once ready, a request goes straight to the router: no promise hop on the hot path.
  const listening = await listenOn((req, res) => (serve ? serve(req, res) : whenReady.then((handler) => handler(req, res))), config.host, config.port);
  let app: AppContext;
  try {
    app = await createAppContext(config, options.loggers);
  } catch (error) {
    await listening.close(0);
    throw error;
  }
  scheduleIdempotencyPurge(app);
  app.webhooks = startWebhookDelivery(app);
  app.closers.unshift(() => app.webhooks.stop());
  serve = toNodeHandler(createRouter(app, (options.routes ?? allRoutes)(app)));
  ready(serve);
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= listening.close(SHUTDOWN_GRACE_MS).then(() => closeAppContext(app));
    return closing;
  };
  return { url: `http://${host}:${listening.port}`, port: listening.port, app, close };
}
