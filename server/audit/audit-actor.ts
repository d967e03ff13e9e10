import { userInfo } from "node:os";
import type { Actor } from "../keys/actor";

/**
 * Who made a change, as the audit log records it: an API key, the operator at this
 * machine through the CLI (by OS user), or a dashboard session.
 */
export type AuditActor = { type: "api_key"; apiKeyId: string } | { type: "cli"; osUser: string } | { type: "session"; sessionId: string };

/** The authenticated key of an HTTP request. */
export const byKey = (actor: Actor): AuditActor => ({ type: "api_key", apiKeyId: actor.apiKeyId });

/**
 * The OS user running this process: the CLI's actor, and the server's own for what it
 * does unasked (dev mode's key). `userInfo` throws for a uid without a passwd entry
 * (some containers); the uid still names the user.
 */
export function byOperator(): AuditActor {
  let osUser: string;
  try {
    osUser = userInfo().username;
  } catch {
    osUser = `uid ${process.getuid?.() ?? "unknown"}`;
  }
  return { type: "cli", osUser };
}

export function actorId(actor: AuditActor): string {
  if (actor.type === "api_key") return actor.apiKeyId;
  if (actor.type === "cli") return actor.osUser;
  return actor.sessionId;
}
