import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { toNodeHandler, type NodeHandler } from "h3";
import type { AppContext } from "./app-context";
import { SettingsCache } from "./cache/settings-cache";
import { MemoryCache } from "./cache/memory-cache";
import type { Config } from "./config";
import { accountRoutes } from "./accounts/routes";
import { auditRoutes } from "./audit/routes";
import { seedSandboxAccount } from "./accounts/seed-sandbox-account";
import { paymentRoutes } from "./payments/routes";
import { routingRoutes } from "./routing/routes";
import { tokenRoutes } from "./tokens/routes";
import { assertDevModeAllowed, assertNoLiveAccess, assertNotProductionDatabase, devModeActor, type DevSeeder } from "./dev-mode";
import { healthRoutes } from "./health/routes";
import { scheduleIdempotencyPurge } from "./jobs/idempotency-purge";
import { ONE_INSTANCE, startInstanceHeartbeat } from "./jobs/instance-heartbeat";
import { Authenticator } from "./keys/authenticator";
import { keyRoutes } from "./keys/routes";
import { merchantRoutes } from "./merchants/routes";
import { Cipher } from "./secrets/cipher";
import { loadMasterKey, MASTER_KEY_FILE } from "./secrets/master-key";
import { checkMasterKey } from "./secrets/master-key-check";
import { settleInterruptedRotation } from "./secrets/rotate-master-key";
import { webhookRoutes } from "./webhooks/routes";
import { eventStreamRoutes } from "./events/stream-routes";
import { endEventStreams } from "./events/stream";
import { testDataRoutes } from "./test-data/routes";
import { openApiRoutes } from "./openapi/routes";
import { NO_DELIVERY, startWebhookDelivery } from "./webhooks/service";
import { WebhookTargets } from "./webhooks/targets";
import { selfAddress } from "./webhooks/url-policy";
import { ProductionRule } from "./production-rule";
import { FINGERPRINT_KEY_LABEL } from "./http/idempotency";
import { listenOn, readTls } from "./http/listen";
import { createRouter } from "./http/router";
import type { Route } from "./http/route";
import { createLoggers, type Loggers } from "./logger";
import { serveMetrics } from "./metrics/endpoint";
import { mountDashboard } from "./dashboard/routes";
import { Metrics } from "./metrics/metrics";
import { migrate } from "../store/database";
import { openStore } from "../store/open-store";

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
  const routes: Route[] = [...healthRoutes(app), ...merchantRoutes(app), ...keyRoutes(app), ...accountRoutes(app), ...routingRoutes(app), ...tokenRoutes(app), ...paymentRoutes(app), ...webhookRoutes(app), ...eventStreamRoutes(app), ...testDataRoutes(app, () => routes), ...auditRoutes(app)];
  // The document describes the whole table, its own route included: it is read at the first request.
  routes.push(...openApiRoutes(routes));
  return routes;
}

/** What dev mode seeds for its merchant besides the merchant and key. */
const DEV_SEEDERS: DevSeeder[] = [seedSandboxAccount];

/** Opens the store, applies migrations, and wires the process-wide dependencies. */
export async function createAppContext(config: Config, loggers: Loggers = createLoggers(config.logLevel)): Promise<AppContext> {
  const store = openStore(config, { busyTimeoutMs: config.busyTimeoutMs });
  await migrate(store.db);
  const cache = new MemoryCache();
  let cipher: Cipher;
  const keyFile = join(config.dataDir, MASTER_KEY_FILE);
  const keyFileWasThere = existsSync(keyFile);
  const production = new ProductionRule(store.db, config.environment === "production");
  try {
    await settleInterruptedRotation(store.db, config);
    cipher = new Cipher(loadMasterKey(config));
    await checkMasterKey(store.db, cipher, config);
    if (config.devMode) {
      await assertNoLiveAccess(store.db, config.dataDir);
      await assertNotProductionDatabase(production, store.location);
    }
  } catch (error) {
    await store.close();
    // A key made just now for a store whose data needs another (a restore without its
    // master.key) must not stay behind looking like the right one.
    if (!config.masterKey && !keyFileWasThere) rmSync(keyFile, { force: true });
    throw error;
  }
  const devActor = config.devMode ? await devModeActor({ db: store.db, cipher }, DEV_SEEDERS) : undefined;
  const { log, requests: requestLog } = loggers;
  const auth = new Authenticator(store.db, store, cache, log, devActor);
  const metrics = new Metrics(store.db);
  const writes = store.createWrites((size) => metrics.groupCommit(size));
  const fingerprintKey = cipher.deriveKey(FINGERPRINT_KEY_LABEL);
  const settings = new SettingsCache(store);
  return { config, store, db: store.db, writes, cache, settings, log, requestLog, auth, cipher, fingerprintKey, production, targets: new WebhookTargets(production), webhooks: NO_DELIVERY, instances: ONE_INSTANCE, metrics, closers: [() => auth.close()] };
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
  const tls = config.tls && readTls(config.tls);
  let serve: NodeHandler | undefined;
  let ready!: (handler: NodeHandler) => void;
  const whenReady = new Promise<NodeHandler>((resolve) => (ready = resolve));
  // Once ready, a request goes straight to the router: no promise hop on the hot path.
  const listening = await listenOn((req, res) => (serve ? serve(req, res) : whenReady.then((handler) => handler(req, res))), config.host, config.port, tls);
  let app: AppContext;
  try {
    app = await createAppContext(config, options.loggers);
  } catch (error) {
    await listening.close(0);
    throw error;
  }
  app.targets.self = selfAddress(config.host, listening.port);
  scheduleIdempotencyPurge(app);
  try {
    await app.production.openForServing(app.log);
    app.instances = await startInstanceHeartbeat(app);
  } catch (error) {
    await closeAppContext(app);
    await listening.close(0);
    throw error;
  }
  app.webhooks = startWebhookDelivery(app);
  app.closers.unshift(() => app.webhooks.stop());
  const routes = (options.routes ?? allRoutes)(app);
  const h3 = createRouter(app, routes);
  serveMetrics(h3, app);
  mountDashboard(h3, app, routes);
  serve = toNodeHandler(h3);
  ready(serve);
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  const close = () => {
    if (!closing) endEventStreams(app.db);
    closing ??= listening.close(SHUTDOWN_GRACE_MS).then(() => closeAppContext(app));
    return closing;
  };
  return { url: `${tls ? "https" : "http"}://${host}:${listening.port}`, port: listening.port, app, close };
}
