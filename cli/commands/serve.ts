import type { Command } from "commander";
import type { Db } from "../../store/database";
import { DEFAULT_RETRY_SCHEDULE, loadConfig, type ConfigFlags } from "../../server/config";
import { storeCounts } from "../../server/status/store-status";
import { OperationError } from "../exit";
import { writeServerFile } from "../server-file";

interface ServeFlags extends ConfigFlags {}

/**
 * Resolves after SIGINT/SIGTERM and a graceful shutdown; a second signal forces exit.
 * Call it before announcing readiness, so a signal sent on seeing the announcement
 * always finds the handler.
 */
export function onShutdownSignal(stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = () => {
      if (stopping) process.exit(1);
      stopping = true;
      stop().then(resolve, resolve);
    };
    process.on("SIGINT", handler);
    process.on("SIGTERM", handler);
  });
}

/** On a store without a merchant or key, the two commands that make them. */
async function printSetupHint(db: Db, dataDir: string): Promise<void> {
  const counts = await storeCounts(db);
  if (counts.merchants > 0 && counts.api_keys > 0) return;
  const data = JSON.stringify(dataDir);
  process.stdout.write(
    `paygate: no ${counts.merchants === 0 ? "merchant or API key" : "API key"} exists yet; make them with\n` +
      `  paygate merchants create --data ${data} --name "My shop"\n` +
      `  paygate keys create --data ${data} --merchant <merchant id> --name backend\n`,
  );
}

/** Settings with no flag: `serve --help` lists them, since nothing else on the command line shows them. */
const ENVIRONMENT_ONLY = `
Settings from the environment only:
  PAYGATE_MASTER_KEY                 base64 of 32 bytes; else <data>/master.key (created once)
  PAYGATE_ENV / NODE_ENV             "production" refuses --dev and test-mode loopback webhooks, and marks the database production for good
  PAYGATE_DEV_MODE                   1 = --dev
  PAYGATE_RATE_LIMIT                 <per second>[:<burst>] per API key, 0 = off (default 100:200)
  PAYGATE_WEBHOOK_RETRY_SCHEDULE     delays between webhook attempts (default ${DEFAULT_RETRY_SCHEDULE})
  PAYGATE_WEBHOOK_TIMEOUT            per webhook attempt
  PAYGATE_CONNECTOR_TIMEOUT          per processor call
  PAYGATE_BUSY_TIMEOUT               wait for another process's database lock (default 5s, at most 60s)
  PAYGATE_IDEMPOTENCY_TTL            how long an Idempotency-Key's answer is kept
  PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT   when an in-flight key of a dead process is taken over
  PAYGATE_<STRIPE|TSYS|NMI>_BASE_URL a processor's base URL (default its production host)
`;

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the gateway's HTTP API")
    .addHelpText("after", ENVIRONMENT_ONLY)
    .option("--host <host>", "listen address (default 127.0.0.1, env PAYGATE_HOST)")
    .option("--port <port>", "listen port, 0 picks a free one (default 8080, env PAYGATE_PORT)")
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (env PAYGATE_LOG_LEVEL)")
    .option("--dev", "development mode: no authentication, acts as a seeded test merchant")
    .option("--tls-cert <file>", "serve HTTPS with this PEM certificate (chain); needs --tls-key (env PAYGATE_TLS_CERT)")
    .option("--tls-key <file>", "the certificate's PEM private key (env PAYGATE_TLS_KEY)")
    .option("--trust-proxy", "behind one reverse proxy: client address and scheme from X-Forwarded-For/-Proto (env PAYGATE_TRUST_PROXY=1)")
    .action(async (flags: ServeFlags) => {
      const config = loadConfig(flags);
      const [{ startServer }, { PortInUseError }] = await Promise.all([import("../../server/server"), import("../../server/http/listen")]);
      let server;
      try {
        server = await startServer(config);
      } catch (error) {
        if (error instanceof PortInUseError) throw new OperationError(error.message);
        throw error;
      }
      const removeServerFile = writeServerFile(config.dataDir, server.url);
      const stopped = onShutdownSignal(server.close);
      process.stdout.write(`paygate listening on ${server.url}\n`);
      // Only a hint: a signal that closes the store while it reads (or a database that is
      // briefly away) must not turn a clean shutdown into a failed exit.
      if (!config.devMode) await printSetupHint(server.app.db, config.dataDir).catch(() => undefined);
      await stopped;
      removeServerFile();
    });
}
