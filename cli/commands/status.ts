import type { Command } from "commander";
import { storeStatus } from "../../server/status/store-status";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { isAlive, readServerFile } from "../server-file";

/** Whether a `paygate serve` runs on the data dir: its server.json names a live process. */
function serverState(dataDir: string): { running: boolean; pid: number | null; url: string | null } {
  const file = readServerFile(dataDir);
  if (!file || !isAlive(file.pid)) return { running: false, pid: null, url: null };
  return { running: true, pid: file.pid, url: file.url };
}

export function registerStatus(program: Command): void {
  withCommonOptions(program.command("status").description("The store at a glance: schema, master key, counts, webhook backlog, running server")).action((flags: DataFlags) =>
    withApp(flags, async (app) => {
      const status = { ...(await storeStatus(app)), server: serverState(app.config.dataDir) };
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
        return;
      }
      const { counts } = status;
      const lines = [
        `data dir:        ${status.data_dir}`,
        `database:        ${status.database}`,
        `schema:          ${status.migrations.at(-1) ?? "(none)"} (${status.migrations.length} migrations applied)`,
        `master key:      ${status.master_key === "missing" ? "missing" : `correct (${status.master_key === "file" ? "master.key" : "PAYGATE_MASTER_KEY"}; it reads the store)`}`,
        `merchants:       ${counts.merchants}`,
        `api keys:        ${counts.api_keys} active`,
        `payments:        ${counts.payments}`,
        `endpoints:       ${counts.webhook_endpoints}`,
        `dead deliveries: ${status.dead_deliveries}`,
        `oldest due:      ${status.oldest_due_delivery ?? "-"}`,
        `server:          ${status.server.running ? `running (pid ${status.server.pid}, ${status.server.url})` : "not running"}`,
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
    }),
  );
}
