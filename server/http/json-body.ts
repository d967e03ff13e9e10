import { ApiError } from "../errors";

/** @default 1 MiB (CONTRACT §1) */
export const MAX_BODY_BYTES = 1024 * 1024;

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
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError(400, "parameter_invalid", "The request body must be a JSON object.");
  }
  return { body: parsed as Record<string, unknown>, raw };
}
