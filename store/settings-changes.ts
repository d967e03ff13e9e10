/**
 * What this process changed among the settings a charge reads (connector accounts,
 * routing, secrets, webhook endpoints). Another process's commits show in
 * `Store.dataVersion()`; this process's own do not (SQLite's data_version moves only
 * for other connections), so every write of those tables marks itself here.
 */
let generation = 0;

export function markSettingsChanged(): void {
  generation += 1;
}

export function settingsGeneration(): number {
  return generation;
}
