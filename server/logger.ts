import pino, { type Logger } from "pino";
import type { LogLevel } from "./config";

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log object: credentials, keys and
 * card fields. Request logging only picks safe fields; this is the second line of
 * defence for anything logged by mistake.
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

/** JSON lines to stdout (or `fd`), one object per line. */
export function createLogger(level: LogLevel, fd = 1): Logger {
  return pino(
    {
      level,
      base: { service: "paygate" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd, sync: true }),
  );
}
