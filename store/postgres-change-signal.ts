import { sql } from "kysely";
import pg from "pg";
import type { Db } from "./database";

/** The channel the change trigger (migration 005) notifies on commit. */
export const CHANGE_CHANNEL = "paygate_data_changed";
/** How often the version sequence is read, in case a notification was missed. */
const POLL_MS = 400;
const RECONNECT_MS = 500;

/**
 * PostgreSQL's counterpart of SQLite's `data_version`: a number that moves after
 * another process changes API keys or merchants. A trigger on those tables (migration
 * 005) bumps the sequence `paygate_data_version` and sends a NOTIFY, which the
 * server delivers at commit; a dedicated connection LISTENs and moves the counter at
 * once. A notification lost with a dropped connection is covered twice: the counter
 * moves when the listener reconnects, and the sequence is polled. The sequence moves
 * before its transaction commits, so a poll that sees it move moves the counter again
 * at the next poll, after the commit.
 */
export class PostgresChangeSignal {
  private counter = 0;
  private seen: number | undefined;
  private recheck = false;
  private lostSight = false;
  private listener: pg.Client | undefined;
  private closed = false;
  private readonly poller: NodeJS.Timeout;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly db: Db,
  ) {
    this.listen();
    this.poller = setInterval(() => void this.poll(), POLL_MS);
    this.poller.unref();
  }

  version(): number {
    return this.counter;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poller);
    clearTimeout(this.reconnectTimer);
    await this.listener?.end().catch(() => undefined);
  }

  private bump(): void {
    this.counter++;
  }

  private listen(): void {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    this.listener = client;
    let lost = false;
    const reconnect = () => {
      if (lost) return;
      lost = true;
      this.bump();
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.reconnectTimer = setTimeout(() => this.listen(), RECONNECT_MS);
      this.reconnectTimer.unref();
    };
    client.on("notification", () => this.bump());
    client.on("error", reconnect);
    client.on("end", reconnect);
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANGE_CHANNEL}`))
      // Whatever changed while no one listened is caught by treating this as a change.
      .then(() => this.bump())
      .catch(reconnect);
  }

  private async poll(): Promise<void> {
    let value: number;
    try {
      const { rows } = await sql<{ last_value: number }>`select last_value from paygate_data_version`.execute(this.db);
      value = Number(rows[0]?.last_value);
    } catch {
      // Unreachable, or not migrated yet: whatever happens meanwhile counts as a change.
      this.lostSight = true;
      return;
    }
    if (this.seen !== undefined && value !== this.seen) {
      this.bump();
      this.recheck = true;
    } else if (this.recheck || this.lostSight) {
      this.bump();
      this.recheck = false;
    }
    this.lostSight = false;
    this.seen = value;
  }
}
