import type { H3Event } from "h3";
import type { Readable } from "node:stream";
import { ApiError } from "../errors";
import { paramName } from "./validate";

/** @default 1 MiB (CONTRACT §1) */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * No route takes a body nested deeper than a few levels (`card[number]`,
 * `metadata[key]`); anything deeper is refused before any code walks it recursively.
 * @default 32
 */
export const MAX_JSON_DEPTH = 32;

// The unread rest of the body makes the connection unusable: tell the client not to reuse it.
const tooLarge = () =>
  new ApiError(413, "payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`, { headers: { connection: "close" } });

// The client went away mid-body: nobody reads this answer, and it is no fault of paygate's.
const aborted = () => new ApiError(400, "request_aborted", "The connection closed before the whole request body arrived.");

/**
 * The body's bytes, read from Node's request stream: a web stream over it (what
 * `Request.body` gives) cost about 5% of a sale's CPU. Over the limit, reading stops
 * at once and the rest is never buffered.
 */
function readBytes(req: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    // An error or a close before the end: either way the client went away mid-body.
    const onGone = () => {
      cleanup();
      reject(aborted());
    };
    req.on("data", onData).once("end", onEnd).once("error", onGone).once("close", onGone);
  });
}

/**
 * Reads the request body as a JSON object. Empty bodies are `{}`; anything over the
 * limit is refused while streaming, without buffering the rest.
 */
export async function readJsonObject(event: H3Event): Promise<Record<string, unknown>> {
  const declared = Number(event.req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const req = event.runtime?.node?.req;
  if (!req) throw new Error("paygate serves HTTP through Node's http module only");
  if (req.readableEnded) return {};
  const raw = (await readBytes(req)).toString("utf8");
  if (raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not valid JSON.");
  }
  if (depthExceeds(parsed, MAX_JSON_DEPTH)) {
    throw new ApiError(400, "parameter_invalid", `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError(400, "parameter_invalid", "The request body must be a JSON object.");
  }
  // Only a body that spells the key, or escapes some character, can hold it.
  const protoAt = raw.includes(PROTO) || raw.includes("\\u") ? protoKeyPath(parsed) : undefined;
  if (protoAt) {
    const param = paramName(protoAt);
    throw new ApiError(400, "parameter_invalid", `${param ? `${param} holds` : "The request body holds"} the key "${PROTO}", which no object accepts.`, param ? { param } : {});
  }
  return parsed as Record<string, unknown>;
}

const PROTO = "__proto__";

/**
 * Where the body has an own key `__proto__`, named by its parent (undefined if none).
 * JSON.parse makes it an ordinary key, but zod's records skip it without a word (a
 * metadata `{"__proto__": {...}}` passed unvalidated and was dropped), and assigning
 * it anywhere would set a prototype: it is refused, as a value no field takes.
 */
export function protoKeyPath(value: unknown): string[] | undefined {
  const pending: Array<[unknown, string[]]> = [[value, []]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (item === null || typeof item !== "object") continue;
    if (!Array.isArray(item) && Object.prototype.hasOwnProperty.call(item, PROTO)) return path;
    for (const [key, child] of Object.entries(item)) pending.push([child, [...path, key]]);
  }
  return undefined;
}

/** Whether any value sits deeper than `max` containers; iterative, so no depth can overflow the stack. */
export function depthExceeds(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}
