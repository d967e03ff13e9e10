import { z } from "zod";
import { parse } from "./http/validate";

/** `{"object":"list","data":[…],"has_more":bool}` (CONTRACT §1). */
export interface ListPage<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

/** The schema of a `ListPage` of `item`s. */
export const listOf = (item: z.ZodType) => z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean() });

export interface ListParams {
  limit: number;
  startingAfter?: string;
}

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  starting_after: z.string().min(1).optional(),
});

/** `limit` (1..100, default 10) and `starting_after=<id>` from a query string. */
export function listParams(query: URLSearchParams): ListParams {
  const { limit, starting_after } = parse(listQuery, { limit: query.get("limit") ?? undefined, starting_after: query.get("starting_after") ?? undefined });
  return starting_after === undefined ? { limit } : { limit, startingAfter: starting_after };
}

/** Rows fetched with `limit + 1` become a page and its `has_more`. */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T): ListPage<T> {
  return { object: "list", data: rows.slice(0, limit).map(map), has_more: rows.length > limit };
}
