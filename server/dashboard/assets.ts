import css from "./assets/dashboard.css?raw";
import script from "./assets/dashboard.js?raw";

/**
 * Every file the dashboard serves, inlined at build time (tsup's raw loader, Vite's
 * `?raw` in tests): the single executable carries them, nothing is read from disk.
 */
export const ASSETS: Record<string, { type: string; body: string }> = {
  "dashboard.css": { type: "text/css; charset=utf-8", body: css },
  "dashboard.js": { type: "text/javascript; charset=utf-8", body: script },
};
