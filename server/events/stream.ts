import type { Db } from "../../store/database";
import type { Owner } from "../../store/events";
import type { EventType } from "./event";

/** How often a stream looks for new events: they may come from any process on the store. */
export const STREAM_POLL_MS = 250;
/** A comment line this often keeps proxies from closing a quiet stream and finds dead clients. */
const HEARTBEAT_MS = 15_000;
/** At most this many events per read, so one read never holds a large batch in memory. */
const BATCH = 100;
/**
 * Event ids are time-ordered, but two processes writing in the same millisecond can
 * commit a smaller id after a larger one was read. Each read looks back this far and
 * skips the ids it already sent, so such an event is still sent, once.
 */
const LOOKBACK_MS = 2_000;

export interface StreamOptions {
  owner: Owner;
  /** Only these types; every type when empty. */
  types: readonly EventType[];
  /** Send events after this id (a `Last-Event-ID`); otherwise only events recorded from now on. */
  after: string | undefined;
}

const encoder = new TextEncoder();

/** The open streams of each store, so shutdown can end them instead of waiting out its grace period. */
const openStreams = new WeakMap<Db, Set<() => void>>();

/** Ends every open stream on `db`; clients reconnect (with `Last-Event-ID`) to the next server. */
export function endEventStreams(db: Db): void {
  for (const end of openStreams.get(db) ?? []) end();
}

/** The id's creation time: `evt_` then 9 base-36 digits of milliseconds (server/ids.ts). */
const idMillis = (id: string): number => parseInt(id.slice(4, 13), 36);
const idFloor = (ms: number): string => `evt_${Math.max(0, ms).toString(36).padStart(9, "0")}`;

/** One server-sent event: the stored payload as `data`, the event id as `id`. */
const frame = (id: string, type: string, payload: string): string => `id: ${id}\nevent: ${type}\ndata: ${payload}\n\n`;

/**
 * The merchant's events as server-sent events, oldest first, as they are recorded.
 * Pull-driven: the store is read only when the client has taken what was sent, so a
 * client that stops reading stops the reads and holds at most one batch here.
 */
export function eventStream(db: Db, options: StreamOptions): ReadableStream<Uint8Array> {
  let cursor = options.after;
  /** Ids sent (or already known to the client) inside the look-back window, with their time. */
  const seen = new Map<string, number>();
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let lastWrite = Date.now();
  const streams = openStreams.get(db) ?? new Set<() => void>();
  openStreams.set(db, streams);
  let end: () => void = () => undefined;
  const stop = () => {
    cancelled = true;
    clearTimeout(timer);
    wake?.();
    streams.delete(end);
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });

  async function startCursor(): Promise<string> {
    const newest = await db
      .selectFrom("events")
      .select("id")
      .where("merchant_id", "=", options.owner.merchantId)
      .where("mode", "=", options.owner.mode)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
    return newest?.id ?? idFloor(Date.now() - LOOKBACK_MS);
  }

  async function read(from: string, limit = BATCH + seen.size): Promise<Array<{ id: string; type: string; payload: string }>> {
    const floorMs = idMillis(from) - LOOKBACK_MS;
    let query = db
      .selectFrom("events")
      .select(["id", "type", "payload"])
      .where("merchant_id", "=", options.owner.merchantId)
      .where("mode", "=", options.owner.mode)
      // created_at bounds the index range; the id bound is the exact one.
      .where("created_at", ">=", new Date(floorMs - 1000).toISOString())
      .where("id", ">", idFloor(floorMs))
      .orderBy("id")
      .limit(limit);
    if (options.types.length > 0) query = query.where("type", "in", options.types);
    return query.execute();
  }

  /** Ids below the look-back window are never read again: no need to remember them. */
  function forget(): void {
    const floorMs = idMillis(cursor as string) - LOOKBACK_MS;
    for (const [id, at] of seen) if (at < floorMs) seen.delete(id);
  }

  return new ReadableStream<Uint8Array>(
    {
      async start(controller) {
        end = () => {
          stop();
          controller.close();
        };
        streams.add(end);
        controller.enqueue(encoder.encode("retry: 1000\n\n"));
        if (cursor === undefined) cursor = await startCursor();
        // The client has everything up to its cursor: ids at or below it are known.
        const known = cursor;
        for (const row of await read(known, Number.MAX_SAFE_INTEGER)) if (row.id <= known) seen.set(row.id, idMillis(row.id));
      },
      async pull(controller) {
        while (!cancelled) {
          const now = Date.now();
          forget();
          const rows = await read(cursor as string);
          if (cancelled) return;
          const fresh = rows.filter((row) => !seen.has(row.id)).slice(0, BATCH);
          if (fresh.length > 0) {
            for (const row of fresh) {
              seen.set(row.id, idMillis(row.id));
              if (row.id > (cursor as string)) cursor = row.id;
            }
            controller.enqueue(encoder.encode(fresh.map((row) => frame(row.id, row.type, row.payload)).join("")));
            lastWrite = now;
            return;
          }
          if (now - lastWrite >= HEARTBEAT_MS) {
            controller.enqueue(encoder.encode(": keep-alive\n\n"));
            lastWrite = now;
            return;
          }
          await sleep(STREAM_POLL_MS);
        }
      },
      cancel: stop,
    },
    { highWaterMark: 1 },
  );
}
