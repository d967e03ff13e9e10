import { isIP } from "node:net";
import { resolve } from "node:path";
import { DEFAULT_POOL_SIZE } from "../store/database";

/**
 * Every setting paygate reads, from command-line flags first and `PAYGATE_*`
 * environment variables second. A bad value stops the start with one line that names
 * the setting (`ConfigError`).
 */
export interface Config {
  dataDir: string;
  /** `PAYGATE_DATABASE_URL`: a PostgreSQL database instead of SQLite in the data dir. */
  databaseUrl: string | undefined;
  /** Connections per process in the PostgreSQL pool. */
  databasePoolSize: number;
  host: string;
  port: number;
  logLevel: LogLevel;
  /** Base64 of 32 bytes; when absent a key file is created in the data dir. */
  masterKey: string | undefined;
  devMode: boolean;
  /** `production` when PAYGATE_ENV or NODE_ENV says so. */
  environment: "production" | "development";
  idempotencyTtlMs: number;
  /** An in-flight idempotency lock not refreshed for this long belongs to a dead process and is taken over. */
  idempotencyLockTimeoutMs: number;
  /** Token bucket per API key; `undefined` turns rate limiting off. */
  rateLimit: { perSecond: number; burst: number } | undefined;
  /** Delays between webhook attempts, in ms; its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  connectorTimeoutMs: number;
  /**
   * How long a write waits for the database's write lock while another process (the
   * CLI, a second server) holds it, before it fails.
   */
  busyTimeoutMs: number;
  /** `PAYGATE_METRICS_TOKEN`: when set, /metrics requires it as a bearer token, from anywhere. */
  metricsToken: string | undefined;
  /** Base URL per live processor (`PAYGATE_<PROCESSOR>_BASE_URL`), when set. */
  connectorBaseUrls: Partial<Record<string, string>>;
  /** Serve HTTPS with these PEM files; each names the setting it came from, for errors. */
  tls: { cert: TlsFile; key: TlsFile } | undefined;
  /** Take the client address and scheme from the one proxy in front (X-Forwarded-For/-Proto). */
  trustProxy: boolean;
}

export interface TlsFile {
  path: string;
  setting: string;
}

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Flags shared by every command; all optional, environment and defaults fill the rest. */
export interface ConfigFlags {
  data?: string;
  databaseUrl?: string;
  host?: string;
  port?: string | number;
  logLevel?: string;
  dev?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy?: boolean;
}

export class ConfigError extends Error {
  constructor(setting: string, problem: string) {
    super(`invalid ${setting}: ${problem}`);
    this.name = "ConfigError";
  }
}

export const DEFAULT_RETRY_SCHEDULE = "1m,5m,30m,2h,24h";
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `"1m,5m"` -> `[60000, 300000]`; units ms, s, m, h, d. */
export function parseDuration(setting: string, text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new ConfigError(setting, `"${text}" is not a duration such as 30s, 5m or 72h`);
  return Number(match[1]) * (DURATION_UNITS[match[2] as string] as number);
}

function parsePort(setting: string, value: string | number): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(setting, `"${value}" is not a port number (0-65535)`);
  return port;
}

function parseBoolean(setting: string, value: string): boolean {
  if (["1", "true", "yes", "on"].includes(value.toLowerCase())) return true;
  if (["0", "false", "no", "off", ""].includes(value.toLowerCase())) return false;
  throw new ConfigError(setting, `"${value}" is not a boolean (1/0, true/false)`);
}

function parseRateLimit(value: string): Config["rateLimit"] {
  const match = /^(\d+)(?::(\d+))?$/.exec(value.trim());
  if (!match) throw new ConfigError("PAYGATE_RATE_LIMIT", `"${value}" is not "<requests per second>[:<burst>]"`);
  const perSecond = Number(match[1]);
  if (perSecond === 0) return undefined;
  const burst = match[2] === undefined ? perSecond * 2 : Number(match[2]);
  if (burst < 1) throw new ConfigError("PAYGATE_RATE_LIMIT", "burst must be at least 1");
  return { perSecond, burst };
}

function parseMasterKey(value: string): string {
  if (Buffer.from(value, "base64").length !== 32) {
    throw new ConfigError("PAYGATE_MASTER_KEY", "must be the base64 encoding of exactly 32 bytes (e.g. `openssl rand -base64 32`)");
  }
  return value;
}

/** SQLite waits for the lock inside the call, so the process does nothing else meanwhile: bounded. */
const MAX_BUSY_TIMEOUT_MS = 60_000;

function parseBusyTimeout(value: string): number {
  const ms = parseDuration("PAYGATE_BUSY_TIMEOUT", value);
  if (ms > MAX_BUSY_TIMEOUT_MS) throw new ConfigError("PAYGATE_BUSY_TIMEOUT", `"${value}" is longer than 60s`);
  return ms;
}

function parseDatabaseUrl(setting: string, value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^postgres(ql)?:\/\/\S+$/.test(value)) throw new ConfigError(setting, "is not a postgres:// URL");
  return value;
}

function parsePoolSize(value: string | undefined): number {
  if (value === undefined || value === "") return DEFAULT_POOL_SIZE;
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new ConfigError("PAYGATE_DATABASE_POOL_SIZE", `"${value}" is not a number of connections (1-1000)`);
  return size;
}

/** The one line `backup` and `restore` answer on PostgreSQL, whose own tools do it better. */
export const POSTGRES_BACKUP_HINT =
  "paygate backup/restore copy the SQLite file; with PostgreSQL (PAYGATE_DATABASE_URL) use pg_dump and pg_restore (or your provider's backups), and keep PAYGATE_MASTER_KEY with them";

/** Whether `host` only listens on this machine. */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/** Short tokens can be guessed by a scraper's neighbours; 16 characters is the floor. */
function parseMetricsToken(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.length < 16) throw new ConfigError("PAYGATE_METRICS_TOKEN", "must be at least 16 characters");
  return value;
}

const LIVE_PROCESSORS = ["stripe", "tsys", "nmi"];

/** Both files or neither: half a TLS setup is a mistake, never a silent HTTP start. */
function parseTls(flags: ConfigFlags, env: NodeJS.ProcessEnv): Config["tls"] {
  const file = (flag: string | undefined, flagName: string, envName: string): TlsFile | undefined => {
    if (flag !== undefined) return { path: resolve(flag), setting: flagName };
    const value = env[envName];
    return value ? { path: resolve(value), setting: envName } : undefined;
  };
  const cert = file(flags.tlsCert, "--tls-cert", "PAYGATE_TLS_CERT");
  const key = file(flags.tlsKey, "--tls-key", "PAYGATE_TLS_KEY");
  if (cert && !key) throw new ConfigError(cert.setting, "needs a private key too (--tls-key or PAYGATE_TLS_KEY)");
  if (key && !cert) throw new ConfigError(key.setting, "needs a certificate too (--tls-cert or PAYGATE_TLS_CERT)");
  return cert && key ? { cert, key } : undefined;
}

/**
 * Where the data lives, as an operator message names it: the data dir on SQLite; on
 * PostgreSQL the database and its host from the URL, never its user or password.
 */
export function storeName(config: Pick<Config, "dataDir" | "databaseUrl">): string {
  if (!config.databaseUrl) return config.dataDir;
  try {
    const url = new URL(config.databaseUrl);
    return `the PostgreSQL database ${decodeURIComponent(url.pathname.slice(1)) || "(default)"} on ${url.host || "localhost"}`;
  } catch {
    return "the PostgreSQL database of PAYGATE_DATABASE_URL";
  }
}

export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = (flags.logLevel ?? env.PAYGATE_LOG_LEVEL ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(flags.logLevel ? "--log-level" : "PAYGATE_LOG_LEVEL", `"${logLevel}" is not one of ${LOG_LEVELS.join(", ")}`);
  }
  const host = flags.host ?? env.PAYGATE_HOST ?? "127.0.0.1";
  if (host.trim() === "") throw new ConfigError(flags.host ? "--host" : "PAYGATE_HOST", "must not be empty");
  const production = [env.PAYGATE_ENV, env.NODE_ENV].some((value) => value?.trim().toLowerCase() === "production");
  const connectorBaseUrls: Partial<Record<string, string>> = {};
  for (const processor of LIVE_PROCESSORS) {
    const name = `PAYGATE_${processor.toUpperCase()}_BASE_URL`;
    const value = env[name];
    if (value === undefined || value === "") continue;
    if (!/^https?:\/\/[^\s]+$/.test(value)) throw new ConfigError(name, `"${value}" is not an http(s) URL`);
    connectorBaseUrls[processor] = value.replace(/\/+$/, "");
  }
  const webhookRetryScheduleMs = (env.PAYGATE_WEBHOOK_RETRY_SCHEDULE || DEFAULT_RETRY_SCHEDULE)
    .split(",")
    .map((part) => parseDuration("PAYGATE_WEBHOOK_RETRY_SCHEDULE", part));
  const idempotencyTtlMs = parseDuration("PAYGATE_IDEMPOTENCY_TTL", env.PAYGATE_IDEMPOTENCY_TTL || "72h");
  const idempotencyLockTimeoutMs = parseDuration("PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT", env.PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT || "60s");
  if (idempotencyLockTimeoutMs === 0) throw new ConfigError("PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT", "must be longer than 0");
  // A record purged while its request still runs would let a retry run it a second time.
  if (idempotencyTtlMs < idempotencyLockTimeoutMs) {
    throw new ConfigError("PAYGATE_IDEMPOTENCY_TTL", `must be at least the idempotency lock timeout (${idempotencyLockTimeoutMs / 1000}s)`);
  }
  const databaseUrl = parseDatabaseUrl(flags.databaseUrl !== undefined ? "--database-url" : "PAYGATE_DATABASE_URL", flags.databaseUrl ?? env.PAYGATE_DATABASE_URL);
  const masterKey = env.PAYGATE_MASTER_KEY ? parseMasterKey(env.PAYGATE_MASTER_KEY) : undefined;
  // Instances sharing a database share no directory where a key file could live.
  if (databaseUrl && !masterKey) throw new ConfigError("PAYGATE_MASTER_KEY", "is required with PostgreSQL (PAYGATE_DATABASE_URL): every instance must decrypt with the same key, so it cannot live in a local key file");
  return {
    dataDir: resolve(flags.data ?? env.PAYGATE_DATA_DIR ?? "paygate-data"),
    databaseUrl,
    databasePoolSize: parsePoolSize(env.PAYGATE_DATABASE_POOL_SIZE),
    host,
    port: parsePort(flags.port !== undefined ? "--port" : "PAYGATE_PORT", flags.port ?? env.PAYGATE_PORT ?? 8080),
    logLevel,
    masterKey,
    devMode: flags.dev === true || parseBoolean("PAYGATE_DEV_MODE", env.PAYGATE_DEV_MODE ?? ""),
    environment: production ? "production" : "development",
    idempotencyTtlMs,
    idempotencyLockTimeoutMs,
    rateLimit: parseRateLimit(env.PAYGATE_RATE_LIMIT ?? "100:200"),
    webhookRetryScheduleMs,
    webhookTimeoutMs: parseDuration("PAYGATE_WEBHOOK_TIMEOUT", env.PAYGATE_WEBHOOK_TIMEOUT || "30s"),
    connectorTimeoutMs: parseDuration("PAYGATE_CONNECTOR_TIMEOUT", env.PAYGATE_CONNECTOR_TIMEOUT || "30s"),
    busyTimeoutMs: parseBusyTimeout(env.PAYGATE_BUSY_TIMEOUT || "5s"),
    connectorBaseUrls,
    metricsToken: parseMetricsToken(env.PAYGATE_METRICS_TOKEN),
    tls: parseTls(flags, env),
    trustProxy: flags.trustProxy === true || parseBoolean("PAYGATE_TRUST_PROXY", env.PAYGATE_TRUST_PROXY ?? ""),
  };
}
