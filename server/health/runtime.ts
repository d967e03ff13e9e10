import { VERSION } from "../app-context";

/**
 * paygate's version and the Node running it. Inside the single executable that Node is
 * the embedded one, which an operator cannot see or upgrade any other way.
 */
export const RUNTIME = { version: VERSION, node: process.version } as const;

/** What `paygate --version` prints. */
export const VERSION_LINE = `paygate ${RUNTIME.version} (node ${RUNTIME.node})`;
