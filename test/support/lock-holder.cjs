// Another writer on the same database, as a second process would be: it takes the
// write lock (BEGIN IMMEDIATE), writes, holds it 50-200 ms (or exactly HOLD_MS),
// commits, pauses 30 ms and starts again, until killed. Prints "holding" once it
// first holds the lock and "round N" after each commit.
// Usage: node lock-holder.cjs <paygate.db> [HOLD_MS]
const Database = require("better-sqlite3");

const [file, holdMs] = process.argv.slice(2);
const db = new Database(file, { timeout: 10_000 });
const pause = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(pause, 0, 0, ms);
const write = db.prepare("INSERT INTO settings (name, value) VALUES ('lock-holder', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value");

for (let round = 1; ; round++) {
  db.exec("BEGIN IMMEDIATE");
  write.run(String(round));
  if (round === 1) process.stdout.write("holding\n");
  sleep(holdMs ? Number(holdMs) : 50 + Math.floor(Math.random() * 150));
  db.exec("COMMIT");
  process.stdout.write(`round ${round}\n`);
  sleep(30);
}
