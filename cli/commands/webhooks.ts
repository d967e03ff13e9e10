import type { Command } from "commander";

export function registerWebhooks(_program: Command): void {}
