import type { Store } from "../../store/database";
import { settingsGeneration } from "../../store/settings-changes";

interface Entry {
  value: Promise<unknown>;
  generation: number;
  version: number;
}

/** What reads through the cache need of it. */
export type SettingsSource = Pick<SettingsCache, "get">;

/** Reads every time: for code that runs outside a server (tests writing events directly). */
export const UNCACHED: SettingsSource = { get: (_key, load) => load() };

/** Bounded: one entry per merchant and mode and per credential, so this only bounds a leak. */
const MAX_ENTRIES = 10_000;

/**
 * What a charge reads but rarely changes (connector accounts, routing, decrypted
 * credentials, webhook endpoints), kept in memory. An entry is used only while
 * neither another process committed (`Store.dataVersion()`, asked on every read, so a
 * credential rotated by the CLI is never used once its commit is visible) nor this
 * process changed any of those tables (`settingsGeneration()`); both are taken before
 * the load, so a change that lands during it makes the entry stale at once.
 */
export class SettingsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly store: Store) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const generation = settingsGeneration();
    const version = this.store.dataVersion();
    const entry = this.entries.get(key);
    if (entry && entry.generation === generation && entry.version === version) return entry.value as Promise<T>;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const value = load();
    const fresh: Entry = { value, generation, version };
    this.entries.set(key, fresh);
    // A failed load is not kept: the next read tries again.
    value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return value;
  }
}
