import { VERSION_LINE } from "../server/health/runtime";

/**
 * The program is loaded only once it is needed, and each command loads what it runs
 * (the server, the OpenAPI document) when it runs: `--version` answers without
 * evaluating the rest of the bundle.
 */
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`${VERSION_LINE}\n`);
} else {
  void import("./program").then(({ runCli }) => runCli(process.argv));
}
