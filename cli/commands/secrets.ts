import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { CONNECTOR_IDS, CONNECTORS } from "../../server/connectors/registry";
import { listSecrets, putSecret } from "../../server/secrets/secret-store";
import { writeUnit } from "../../server/unit-of-work";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { UsageError } from "../exit";
import { printResult } from "../output";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}

/**
 * Each connector's secret format, as its own parser words it when refusing a value
 * (an empty one here), so the help never drifts from what is accepted.
 */
function secretFormats(): string {
  const lines = CONNECTOR_IDS.map((id) => {
    if (!CONNECTORS[id].liveCapable) return `  ${id}: any non-empty value (the sandbox simulator)`;
    try {
      CONNECTORS[id].parseCredential("");
      return `  ${id}: any value`;
    } catch (error) {
      return `  ${id}: ${(error as Error).message}`;
    }
  });
  return `\nSecret format per connector:\n${lines.join("\n")}\n`;
}

export function registerSecrets(program: Command): void {
  const secrets = program.command("secrets").description("Processor credentials in paygate's encrypted secret store");
  withCommonOptions(secrets.command("put").description("Store a new version of a secret (read from stdin unless --value)"))
    .addHelpText("after", secretFormats)
    .argument("<path>", "the secret's path, referenced as secret://<path>")
    .option("--value <value>", "the value (visible in shell history and ps: prefer stdin)")
    .action(async (path: string, flags: DataFlags & { value?: string }) => {
      const value = flags.value ?? (process.stdin.isTTY ? undefined : await readStdin());
      if (value === undefined) throw new UsageError("give the value on stdin (e.g. `printf %s \"$KEY\" | paygate secrets put PATH`) or with --value");
      return withApp(flags, async (app) => {
        const version = await writeUnit(app.writes).commit((trx) => putSecret({ db: trx, cipher: app.cipher }, path, value, byOperator()));
        if (flags.json) process.stdout.write(`${JSON.stringify({ path, version, ref: `secret://${path}` })}\n`);
        else process.stdout.write(`stored secret://${path} version ${version}\n`);
      });
    });
  withCommonOptions(secrets.command("list").description("List secret paths and versions (never values)"))
    .action((flags: DataFlags) =>
      withApp(flags, async (app) => {
        const list = await listSecrets(app.db);
        printResult(flags.json, { object: "list", data: list, has_more: false }, list, ["path", "version", "updated_at"]);
      }),
    );
}
