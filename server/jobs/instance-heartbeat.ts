import { announceInstance, countLiveInstances, withdrawInstance } from "../../store/instances";
import type { AppContext } from "../app-context";
import { newUuid } from "../ids";
import { scheduleJob } from "./schedule";

/** The serving processes sharing this database, as last counted. */
export interface Instances {
  /** How many serve on the database, this one included; at least 1. */
  live(): number;
}

/** The CLI serves nothing: it never counts, nor is counted. */
export const ONE_INSTANCE: Instances = { live: () => 1 };

/** An instance not heard from for three beats is counted out (killed, or cut from the database). */
const LAPSE_MS = 6_000;

/**
 * Announces this serving process in the database every 2 s and counts the live ones,
 * so limits meant for the whole deployment (the rate limit) can be shared out. Renewed
 * at every beat, withdrawn at a clean shutdown, lapsed 6 s after a crash.
 */
export async function startInstanceHeartbeat(app: AppContext): Promise<Instances> {
  const id = newUuid();
  let live = 1;
  const beat = async () => {
    const now = Date.now();
    await announceInstance(app.db, id, now + LAPSE_MS);
    live = Math.max(1, await countLiveInstances(app.db, now));
    app.metrics.instances(live);
  };
  await beat();
  scheduleJob(app, "instance-heartbeat", "*/2 * * * * *", beat);
  app.closers.push(() => withdrawInstance(app.db, id));
  return { live: () => live };
}
