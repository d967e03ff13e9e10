import type { Compilable, CompiledQuery, QueryResult } from "kysely";
import type { Db } from "./database";

/**
 * A query that is built and compiled by kysely once per engine and shape of its
 * arguments, then only executed: building and compiling a query anew on every call
 * was the largest share of a sale's CPU after SQLite itself.
 *
 * `build` must only place its arguments in the query, never look at them: it runs
 * once with stand-ins. What may differ between calls and still be right is what the
 * shape covers: which values are null or undefined, the keys of objects (in order)
 * and the lengths of arrays. Every other value is a bound parameter.
 */
export function compiled<A extends unknown[], O>(build: (db: Db, ...args: A) => Compilable<O>): (db: Db, ...args: A) => Promise<QueryResult<O>> {
  const templates = new WeakMap<object, Map<string, Template>>();
  return async (db, ...args) => {
    const executor = db.getExecutor();
    let byShape = templates.get(executor.adapter);
    if (!byShape) templates.set(executor.adapter, (byShape = new Map()));
    const leaves: unknown[] = [];
    const shape = flatten(args, leaves);
    let template = byShape.get(shape);
    if (!template) byShape.set(shape, (template = compileTemplate(db, build, args)));
    const parameters = template.slots.map((slot) => (slot.leaf === undefined ? slot.constant : leaves[slot.leaf]));
    return db.executeQuery<O>({ ...template.query, parameters });
  };
}

interface Template {
  query: CompiledQuery;
  /** Each parameter: one of the call's leaf values, or a constant of the query itself. */
  slots: Array<{ leaf: number; constant?: undefined } | { leaf?: undefined; constant: unknown }>;
}

/** Leading a stand-in: no value paygate binds starts with NUL (refused at the HTTP boundary). */
const STAND_IN = "\u0000paygate-compiled-";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Appends the values to bind to `leaves`, in a fixed order, and returns the shape. */
function flatten(value: unknown, leaves: unknown[]): string {
  if (value === null) return "n";
  if (value === undefined) return "u";
  if (Array.isArray(value)) {
    let shape = "[";
    for (const item of value) shape += `${flatten(item, leaves)},`;
    return `${shape}]`;
  }
  if (isPlainObject(value)) {
    let shape = "{";
    // Keys are column names: no quoting needed to keep shapes apart.
    for (const key in value) shape += `${key}:${flatten(value[key], leaves)},`;
    return `${shape}}`;
  }
  leaves.push(value);
  return "v";
}

/** The arguments with each leaf replaced by its stand-in, for the one build. */
function standIns(value: unknown, counter: { next: number }): unknown {
  if (value === null || value === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => standIns(item, counter));
  if (isPlainObject(value)) return Object.fromEntries(Object.keys(value).map((key) => [key, standIns(value[key], counter)]));
  return `${STAND_IN}${counter.next++}`;
}

function compileTemplate<A extends unknown[], O>(db: Db, build: (db: Db, ...args: A) => Compilable<O>, args: A): Template {
  const query = build(db, ...(standIns(args, { next: 0 }) as A)).compile();
  if (query.sql.includes(STAND_IN)) throw new Error(`compiled query placed an argument in its SQL text: ${query.sql}`);
  const slots = query.parameters.map((parameter) =>
    typeof parameter === "string" && parameter.startsWith(STAND_IN) ? { leaf: Number(parameter.slice(STAND_IN.length)) } : { constant: parameter },
  );
  return { query, slots };
}
