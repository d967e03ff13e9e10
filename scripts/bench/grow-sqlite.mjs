// Grows a SQLite paygate store for `npm run bench -- --grow N`: N payments, each with
// the events and the idempotency record a sale leaves, copied from a sale the bench
// made (so every column holds what paygate writes), with fresh ids and creation times
// spread over the year before it. Direct inserts in transactions of 10,000 payments,
// with the server stopped.
import { randomBytes, randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import Database from "better-sqlite3";

const BATCH = 10_000;

function insertStatement(db, table, row) {
  const columns = Object.keys(row);
  return db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`);
}

export function growSqlite(file, count) {
  const started = performance.now();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  const payment = db.prepare("SELECT * FROM payments WHERE status = 'succeeded' ORDER BY created_at DESC LIMIT 1").get();
  if (!payment) throw new Error("no sale to copy: run a sale before growing the store");
  const events = db.prepare("SELECT * FROM events WHERE payment_id = ? ORDER BY created_at").all(payment.id);
  const record = db.prepare("SELECT * FROM idempotency_keys WHERE path = '/v1/payments/sale' AND state = 'done' LIMIT 1").get();
  const insertPayment = insertStatement(db, "payments", payment);
  const insertEvent = insertStatement(db, "events", events[0]);
  const insertRecord = insertStatement(db, "idempotency_keys", record);
  const newest = Date.parse(payment.created_at) - 60_000;
  const spreadMs = 365 * 24 * 3600 * 1000;
  // Payloads by string replacement: parsing and serializing JSON per row was most of the seeding time.
  const templates = events.map((event) => ({ event, parts: event.payload.split(payment.id).map((part) => part.split(event.id).join("\u0000EVT\u0000").split(event.created_at).join("\u0000AT\u0000")) }));
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const at = new Date(newest - Math.floor((i / count) * spreadMs)).toISOString();
      const id = randomUUID();
      insertPayment.run({ ...payment, id, created_at: at, updated_at: at });
      for (const { event, parts } of templates) {
        const eventId = `evt_${randomBytes(12).toString("hex")}`;
        const payload = parts.join(id).split("\u0000EVT\u0000").join(eventId).split("\u0000AT\u0000").join(at);
        insertEvent.run({ ...event, id: eventId, payment_id: id, created_at: at, payload });
      }
      insertRecord.run({ ...record, key: `grow-${id}`, created_at: Date.parse(at) });
    }
  });
  for (let from = 0; from < count; from += BATCH) batch(from, Math.min(count, from + BATCH));
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return {
    payments: count,
    events: count * events.length,
    idempotency: count,
    seconds: Math.round((performance.now() - started) / 1000),
    sizeMb: Math.round(statSync(file).size / 2 ** 20),
  };
}
