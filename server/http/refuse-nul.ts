import { ApiError } from "../errors";
import { paramName } from "./validate";

/** What a request carries as text, from any of the HTTP boundaries (API routes, dashboard forms). */
export interface RequestText {
  params?: Readonly<Record<string, string>>;
  query?: URLSearchParams;
  /** A dashboard form: every value of a repeated name, not just the first that `get` reads. */
  form?: URLSearchParams;
  body?: unknown;
}

const NUL = "\u0000";

const refused = (param: string | undefined) =>
  new ApiError(400, "parameter_invalid", `${param ? `${param} contains` : "The request contains"} the NUL character (U+0000), which no field accepts.`, param ? { param } : {});

/**
 * Refuses a NUL anywhere in a request's text before any service sees it. PostgreSQL's
 * text cannot hold U+0000, so such a value would fail only at the insert, after a
 * processor had already moved money; SQLite gets the same answer so both engines agree.
 * A key holding NUL is named by its parent, the nearest name that is not itself refused.
 */
export function refuseNul({ params = {}, query, form, body }: RequestText): void {
  for (const [name, value] of [...Object.entries(params), ...(query ?? []), ...(form ?? [])]) {
    if (name.includes(NUL) || value.includes(NUL)) throw refused(name.includes(NUL) ? undefined : name);
  }
  // Iterative, like the depth check: the body's depth is bounded, but no walk here needs to trust that.
  const pending: Array<[unknown, string[]]> = [[body, []]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === "string") {
      if (item.includes(NUL)) throw refused(paramName(path) || undefined);
      continue;
    }
    if (item === null || typeof item !== "object") continue;
    for (const [key, child] of Object.entries(item)) {
      if (key.includes(NUL)) throw refused(paramName(path) || undefined);
      pending.push([child, [...path, key]]);
    }
  }
}
