import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config";
import { createIsoTime } from "./log-time";

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
  /** Write each line before returning (tests that read the log file at once). */
  sync?: boolean;
}

const needsMetadata: typeof pino.symbols.needsMetadataGsym = pino.symbols.needsMetadataGsym;
/** pino's numeric level of `warn`: lines at or above it are written at once. */
const WARN = 40;
/** The longest an info line waits in the buffer on a quiet process. */
const FLUSH_INTERVAL_MS = 1000;
const BUFFER_BYTES = 4096;

/**
 * Lines collect in a 4 KiB buffer written with one syscall (keeping a write per line
 * off the request path), flushed at least every second by an unref'd timer, and at once
 * after a warn or worse, so a warning is on its way before anything else happens, even
 * a `kill -9`. Writes are synchronous so that flush-at-once keeps the lines in order.
 */
function levelAwareDestination(fd: number): DestinationStream {
  const buffered = pino.destination({ fd, sync: true, minLength: BUFFER_BYTES, periodicFlush: FLUSH_INTERVAL_MS });
  // pino sets `lastLevel` before each write on a stream that asks for metadata.
  const stream: DestinationStream & { lastLevel: number; [needsMetadata]: true; flush(callback?: (error?: Error) => void): void; flushSync(): void } = {
    [needsMetadata]: true,
    lastLevel: 0,
    write(line: string) {
      buffered.write(line);
      if (this.lastLevel >= WARN) buffered.flush();
    },
    flush: (callback?: (error?: Error) => void) => buffered.flush(callback),
    flushSync: () => buffered.flushSync(),
  };
  return stream;
}

/** JSON lines to stdout (or `fd`), one object per line. */
export function createLoggers(level: LogLevel, fd = 1, options: LoggerOptions = {}): Loggers {
  const destination = options.sync ? pino.destination({ fd, sync: true }) : levelAwareDestination(fd);
  const common = {
    level,
    base: { service: "paygate" },
    timestamp: createIsoTime(),
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return {
    log: pino({ ...common, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination),
    requests: pino(common, destination),
  };
}
