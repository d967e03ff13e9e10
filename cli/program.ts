import { Command, CommanderError, Help, type Option } from "commander";
import { VERSION } from "../server/app-context";
import { registerAccounts } from "./commands/accounts";
import { registerKeys } from "./commands/keys";
import { registerMerchants } from "./commands/merchants";
import { registerMigrate } from "./commands/migrate";
import { registerSandbox } from "./commands/sandbox";
import { registerSecrets } from "./commands/secrets";
import { registerServe } from "./commands/serve";
import { registerWebhooks } from "./commands/webhooks";
import { registerEndpoints } from "./commands/endpoints";
import { registerPayments } from "./commands/payments";
import { registerRouting } from "./commands/routing";
import { registerStatus } from "./commands/status";
import { EXIT_USAGE, fail } from "./exit";

export function buildProgram(): Command {
  const program = new Command("paygate")
    .description("A self-hostable payment gateway in one executable")
    .version(VERSION, "-v, --version")
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
  registerPayments(program);
  registerEndpoints(program);
  registerRouting(program);
  registerStatus(program);
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
