import pino, { type Logger } from "pino";
import type { LogLevel } from "./config";

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log object: credentials, keys and
 * card fields. It is the safety net of the general logger, for anything logged by
 * mistake (an error's context, say).
 */
export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "key",
  "*.key",
  "secret",
  "*.secret",
  "card",
  "*.card",
  "number",
  "*.number",
  "cvc",
  "*.cvc",
  "credential",
  "*.credential",
  "value",
  "*.value",
  "api_key",
  "*.api_key",
  "transaction_key",
  "*.transaction_key",
  "security_key",
  "*.security_key",
];

export interface Loggers {
  /** Everything but the request lines; redacting. */
  log: Logger;
  /**
   * One line per request, built only from fixed safe fields (request id, method,
   * route pattern, status, duration, merchant short id), so it skips the redaction
   * pass that would otherwise run on every request.
   */
  requests: Logger;
}

export interface LoggerOptions {
  /**
   * Write each line before returning. Off by default: lines are buffered and written
   * asynchronously (flushed at shutdown), which keeps log I/O off the request path.
   */
  sync?: boolean;
}

/** JSON lines to stdout (or `fd`), one object per line. */
export function createLoggers(level: LogLevel, fd = 1, options: LoggerOptions = {}): Loggers {
  const destination = pino.destination({ fd, sync: options.sync ?? false, minLength: options.sync ? 0 : 4096 });
  const common = {
    level,
    base: { service: "paygate" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return {
    log: pino({ ...common, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination),
    requests: pino(common, destination),
  };
}
