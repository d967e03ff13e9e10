import type { Command } from "commander";
import { loadConfig, type ConfigFlags } from "../../server/config";
import { PortInUseError } from "../../server/http/listen";
import { startServer } from "../../server/server";
import { OperationError } from "../exit";

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

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the gateway's HTTP API")
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
      let server;
      try {
        server = await startServer(config);
      } catch (error) {
        if (error instanceof PortInUseError) throw new OperationError(error.message);
        throw error;
      }
      const stopped = onShutdownSignal(server.close);
      process.stdout.write(`paygate listening on ${server.url}\n`);
      await stopped;
    });
}
