import { Command, CommanderError, Help, type Option } from "commander";
import { VERSION_LINE } from "../server/health/runtime";
import { registerAccounts } from "./commands/accounts";
import { registerAudit } from "./commands/audit";
import { registerBackup } from "./commands/backup";
import { registerKeys } from "./commands/keys";
import { registerMasterKey } from "./commands/master-key";
import { registerMerchants } from "./commands/merchants";
import { registerMigrate } from "./commands/migrate";
import { registerOpenApi } from "./commands/openapi";
import { registerRestore } from "./commands/restore";
import { registerSandbox } from "./commands/sandbox";
import { registerSecrets } from "./commands/secrets";
import { registerSelfCheck } from "./commands/self-check";
import { registerServe } from "./commands/serve";
import { registerWebhooks } from "./commands/webhooks";
import { registerListen } from "./commands/listen";
import { registerTrigger } from "./commands/trigger";
import { registerEvents } from "./commands/events";
import { registerReset } from "./commands/reset";
import { registerEndpoints } from "./commands/endpoints";
import { registerPayments } from "./commands/payments";
import { registerRouting } from "./commands/routing";
import { registerStatus } from "./commands/status";
import { EXIT_USAGE, fail } from "./exit";

export function buildProgram(): Command {
  const program = new Command("paygate")
    .description("A self-hostable payment gateway in one executable")
    .version(VERSION_LINE, "-v, --version")
    .showHelpAfterError()
    .exitOverride()
    // Commander does not mark .requiredOption() in the help; every subcommand inherits this.
    .configureHelp({ optionDescription: (option: Option) => `${new Help().optionDescription(option)}${option.mandatory ? " (required)" : ""}` });
  registerServe(program);
  registerSandbox(program);
  registerMigrate(program);
  registerMerchants(program);
  registerKeys(program);
  registerAccounts(program);
  registerSecrets(program);
  registerWebhooks(program);
  registerAudit(program);
  registerBackup(program);
  registerRestore(program);
  registerMasterKey(program);
  registerSelfCheck(program);
  registerListen(program);
  registerTrigger(program);
  registerEvents(program);
  registerReset(program);
  registerPayments(program);
  registerEndpoints(program);
  registerRouting(program);
  registerStatus(program);
  registerOpenApi(program);
  return program;
}

/** Runs the CLI: exit 0 on success, 1 when the operation failed, 2 on bad usage. */
export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram();
  const overrideAll = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(overrideAll);
  };
  overrideAll(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version "errors" are successful exits in commander.
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    fail(error);
  }
}
