import { insertSecretVersion, latestSecretVersion, listSecretPaths } from "../../store/secrets";
import type { Db } from "../../store/database";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { ApiError } from "../errors";
import { isoNow } from "../ids";
import type { Cipher } from "./cipher";

const PATH_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._\/-]{0,199}$/;
const ENV_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export type CredentialRef = { scheme: "secret"; path: string } | { scheme: "env"; variable: string };

export interface SecretDeps {
  db: Db;
  cipher: Cipher;
}

/** Reasons a credential cannot be read; never includes a value. */
export class CredentialUnavailableError extends Error {
  override name = "CredentialUnavailableError";
}

/** Binds a secret version's ciphertext to its path and version. */
export const secretAad = (path: string, version: number): string => `secret:${path}:${version}`;

export function isSecretPath(path: string): boolean {
  return PATH_PATTERN.test(path) && !path.includes("..");
}

/**
 * `secret://<path>` (the embedded store) or `env://<VAR>`; anything else is a 400
 * naming `param`. The reference is a pointer: it never holds the secret itself.
 */
export function parseCredentialRef(ref: string, param = "credential_ref"): CredentialRef {
  const secret = /^secret:\/\/(.+)$/.exec(ref);
  if (secret && isSecretPath(secret[1] as string)) return { scheme: "secret", path: secret[1] as string };
  const env = /^env:\/\/(.+)$/.exec(ref);
  if (env && ENV_PATTERN.test(env[1] as string)) {
    // paygate's own settings (the master key among them) are never a processor's credential.
    if (/^PAYGATE_/i.test(env[1] as string)) {
      throw new ApiError(400, "parameter_invalid", "credential_ref cannot name a PAYGATE_* variable: those are paygate's own settings, the master key among them.", { param });
    }
    return { scheme: "env", variable: env[1] as string };
  }
  throw new ApiError(400, "parameter_invalid", "credential_ref must be secret://<path> (paygate's secret store) or env://<VARIABLE>.", { param });
}

/** Stores a new version of the secret at `path`; readers get it from now on. */
export async function putSecret(deps: SecretDeps, path: string, value: string, by: AuditActor): Promise<number> {
  if (!isSecretPath(path)) throw new ApiError(400, "parameter_invalid", "A secret path is 1-200 characters of letters, digits, . _ / -.", { param: "path" });
  if (value === "") throw new ApiError(400, "parameter_invalid", "A secret cannot be empty.", { param: "value" });
  const version = await insertSecretVersion(deps.db, path, (v) => deps.cipher.encrypt(value, secretAad(path, v)), isoNow());
  await recordAudit(deps.db, by, { action: "secret.version_created", target: { type: "secret", id: path }, merchantId: null, mode: null, details: { version } });
  return version;
}

export const listSecrets = (db: Db) => listSecretPaths(db);

/**
 * The current value behind a reference: the latest version of a stored secret (read
 * at every call, so `secrets put` takes effect on the next charge without a
 * restart) or the named environment variable.
 */
export async function resolveCredential(deps: SecretDeps, ref: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const parsed = parseCredentialRef(ref);
  if (parsed.scheme === "env") {
    const value = env[parsed.variable];
    if (value === undefined || value === "") throw new CredentialUnavailableError(`environment variable ${parsed.variable} is not set`);
    return value;
  }
  const latest = await latestSecretVersion(deps.db, parsed.path);
  if (!latest) throw new CredentialUnavailableError(`no secret is stored at ${parsed.path}`);
  return deps.cipher.decrypt(latest.ciphertext, secretAad(parsed.path, latest.version));
}
