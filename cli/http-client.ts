import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { SANDBOX_FILE, type SandboxInfo } from "../server/sandbox/sandbox";
import { OperationError, UsageError } from "./exit";

export interface RemoteFlags {
  baseUrl?: string;
  apiKey?: string;
  data?: string;
  json?: boolean;
}

export interface Remote {
  baseUrl: string;
  apiKey: string;
}

/** How long one API call may take before the command gives up. */
const CALL_TIMEOUT_MS = 30_000;

/** The options of every command that talks to a running server over HTTP. */
export function withRemoteOptions(command: Command): Command {
  return command
    .option("--base-url <url>", "the running server (env PAYGATE_BASE_URL)")
    .option("--api-key <key>", "a secret API key (env PAYGATE_API_KEY)")
    .option("--data <dir>", "a sandbox's data dir: take the URL and test secret key from its sandbox.json")
    .option("--json", "print JSON for scripts");
}

function readSandbox(dir: string): SandboxInfo | undefined {
  const file = join(resolve(dir), SANDBOX_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as SandboxInfo) : undefined;
}

/** Flags win over the environment, which wins over a sandbox's sandbox.json. */
export function resolveRemote(flags: RemoteFlags, env: NodeJS.ProcessEnv = process.env): Remote {
  const sandbox = flags.data === undefined ? undefined : readSandbox(flags.data);
  if (flags.data !== undefined && !sandbox) throw new UsageError(`${flags.data} holds no ${SANDBOX_FILE}: start \`paygate sandbox --data ${flags.data}\` first`);
  const baseUrl = flags.baseUrl ?? env.PAYGATE_BASE_URL ?? sandbox?.base_url;
  const apiKey = flags.apiKey ?? env.PAYGATE_API_KEY ?? sandbox?.keys.secret;
  if (!baseUrl) throw new UsageError("which server? give --base-url, PAYGATE_BASE_URL, or --data of a sandbox");
  if (!apiKey) throw new UsageError("which key? give --api-key, PAYGATE_API_KEY, or --data of a sandbox");
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url "${baseUrl}" is not a URL`);
  }
  return { baseUrl: url.origin, apiKey };
}

/** What an error answer says, as one line: the API's own message and code. */
export function apiFailure(status: number, body: unknown): OperationError {
  const error = (body as { error?: { message?: string; code?: string } } | undefined)?.error;
  return new OperationError(error?.message ? `${error.message} (${status} ${error.code ?? ""})`.replace(" )", ")") : `the server answered ${status}`);
}

/** One JSON API call. A POST carries a fresh Idempotency-Key; an error answer throws. */
export async function call<T = Record<string, unknown>>(remote: Remote, method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const { status, body: answer } = await callRaw(remote, method, path, body);
  if (status >= 400) throw apiFailure(status, answer);
  return answer as T;
}

/** Like `call`, but an error answer is returned (a decline is an answer `trigger` shows). */
export async function callRaw(remote: Remote, method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { authorization: `Bearer ${remote.apiKey}` };
  if (method === "POST") {
    headers["content-type"] = "application/json";
    headers["idempotency-key"] = `cli-${randomUUID()}`;
  }
  let res: Response;
  try {
    res = await fetch(remote.baseUrl + path, {
      method,
      headers,
      body: method === "POST" ? JSON.stringify(body ?? {}) : undefined,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (error) {
    throw new OperationError(`cannot reach ${remote.baseUrl}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    throw new OperationError(`${remote.baseUrl} answered ${res.status} with something other than JSON; is it a paygate server?`);
  }
  return { status: res.status, body: parsed };
}
