import type { z } from "zod";
import { errors, type ApiError } from "../errors";

/** `["card", "number"]` -> `card[number]`, the form `param` takes in errors. */
export function paramName(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  return (head ?? "") + rest.map((p) => `[${p}]`).join("");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * The first problem of a failed parse as the API's error: unknown fields first
 * (`parameter_unknown`), then absent required ones (`parameter_missing`), then the
 * rest (`parameter_invalid`, with the schema's message).
 */
function toApiError(issues: readonly z.core.$ZodIssue[], input: unknown): ApiError {
  const unknown = issues.find((i) => i.code === "unrecognized_keys");
  if (unknown && unknown.code === "unrecognized_keys") return errors.unknown(paramName([...unknown.path, unknown.keys[0] ?? ""]));
  const missing = issues.find((i) => i.path.length > 0 && valueAt(input, i.path) === undefined);
  if (missing) return errors.missing(paramName(missing.path));
  const first = issues[0];
  const param = paramName(first?.path ?? []);
  const message = first?.message.startsWith("Invalid input") || !first ? `Invalid value for ${param || "the request body"}.` : first.message;
  return errors.invalid(param, message);
}

/** Parses a request body (or query) with `schema`, or throws the matching 400. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw toApiError(result.error.issues, input);
}
