import { runCli } from "./program";

void runCli(process.argv);
