import type { WebhookEndpointRow } from "../../store/schema";
import { randomAlphanumeric } from "../ids";
import type { Cipher } from "../secrets/cipher";

/** How long a rotated-out secret keeps signing, so receivers can switch without a gap. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export const newSigningSecret = (): string => `whsec_${randomAlphanumeric(32)}`;

/** Secrets are stored encrypted and bound to their endpoint (AAD = endpoint id). */
export const sealSecret = (cipher: Cipher, endpointId: string, secret: string): string => cipher.encrypt(secret, endpointId);

type SecretColumns = Pick<WebhookEndpointRow, "secret_encrypted" | "previous_secret_encrypted" | "previous_secret_expires_at">;

/** The secrets that sign a request now: the current one, then a rotated-out one still in its grace period. */
export function signingSecrets(cipher: Cipher, endpointId: string, row: SecretColumns, nowIso: string): string[] {
  const secrets = [cipher.decrypt(row.secret_encrypted, endpointId)];
  if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at > nowIso) {
    secrets.push(cipher.decrypt(row.previous_secret_encrypted, endpointId));
  }
  return secrets;
}
