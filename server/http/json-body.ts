import { ApiError } from "../errors";

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

/**
 * Reads the request body as a JSON object. Empty bodies are `{}`; anything over the
 * limit is refused while streaming, without buffering the rest.
 */
export async function readJsonObject(request: Request): Promise<{ body: Record<string, unknown>; raw: string }> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (!request.body) return { body: {}, raw: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const raw = Buffer.concat(chunks).toString("utf8");
  if (raw.trim() === "") return { body: {}, raw };
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
  return { body: parsed as Record<string, unknown>, raw };
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
