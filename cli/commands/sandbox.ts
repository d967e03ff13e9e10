import type { Command } from "commander";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../server/config";
import { OperationError } from "../exit";
import { onShutdownSignal } from "./serve";

interface SandboxFlags {
  port?: string;
  data?: string;
  json?: boolean;
  webhook?: string;
  logLevel?: string;
}

export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description("A local sandbox gateway in one command: seeded merchant, keys and mock account")
    .option("--port <port>", "listen port on 127.0.0.1, 0 picks a free one", "8080")
    .option("--data <dir>", "keep the sandbox in DIR and reuse it next time (default: a temporary dir, removed on exit)")
    .option("--json", "print one JSON line (base_url, keys, account, data_dir) first on stdout; logs go to stderr")
    .option("--webhook <url>", "register a webhook endpoint for every event type and print its secret")
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (env PAYGATE_LOG_LEVEL)")
    .action(async (flags: SandboxFlags) => {
      const temporary = flags.data === undefined;
      const dataDir = flags.data ?? mkdtempSync(join(tmpdir(), "paygate-sandbox-"));
      const removeTemporary = () => {
        if (temporary) rmSync(dataDir, { recursive: true, force: true });
      };
      const [{ startServer }, { PortInUseError }, { createLoggers }, { sandboxBanner, sandboxJson }, { openSandbox, recordSandboxUrl, sandboxSignInLink }] = await Promise.all([
        import("../../server/server"),
        import("../../server/http/listen"),
        import("../../server/logger"),
        import("../../server/sandbox/banner"),
        import("../../server/sandbox/sandbox"),
      ]);
      let server;
      try {
        const config = loadConfig({ data: dataDir, port: flags.port, host: "127.0.0.1", logLevel: flags.logLevel }, { ...process.env, PAYGATE_DEV_MODE: "" });
        // stdout belongs to the summary (or the JSON line): request logs go to stderr.
        server = await startServer(config, { loggers: createLoggers(config.logLevel, 2) });
      } catch (error) {
        removeTemporary();
        if (error instanceof PortInUseError) throw new OperationError(`${error.message}; pick another with --port, or --port 0 for a free one`);
        throw error;
      }
      const stopped = onShutdownSignal(server.close);
      try {
        const info = await openSandbox(server.app, flags.webhook);
        recordSandboxUrl(dataDir, info, server.url);
        process.stdout.write(flags.json ? `${sandboxJson(info, server.url, dataDir)}\n` : sandboxBanner(info, server.url, dataDir, temporary, await sandboxSignInLink(server.app, info, server.url)));
      } catch (error) {
        await server.close();
        removeTemporary();
        throw error;
      }
      await stopped;
      removeTemporary();
    });
}
