import type { WebhookEndpointRow } from "../../store/schema";
import { randomAlphanumeric } from "../ids";
import type { Cipher } from "../secrets/cipher";

/** How long a rotated-out secret keeps signing, so receivers can switch without a gap. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export const newSigningSecret = (): string => `whsec_${randomAlphanumeric(32)}`;

/** Secrets are stored encrypted and bound to their endpoint (AAD = endpoint id). */
export const sealSecret = (cipher: Cipher, endpointId: string, secret: string): string => cipher.encrypt(secret, endpointId);

type SecretColumns = Pick<WebhookEndpointRow, "secret_encrypted" | "previous_secret_encrypted" | "previous_secret_expires_at">;

/** Distinct ciphertexts kept decrypted; far more than a deployment's endpoints, so this only bounds a leak. */
const MAX_SECRETS = 1_000;

/**
 * Decrypts signing secrets once, not once per delivery. Keyed by the ciphertext itself
 * (read with every due delivery) and its endpoint: a rotation writes a new ciphertext,
 * so a rotated secret is never used once the rotation is visible, with nothing to
 * invalidate, in this process or another.
 */
export class SigningSecretCache {
  private readonly secrets = new Map<string, string>();

  constructor(private readonly cipher: Cipher) {}

  decrypt(sealed: string, endpointId: string): string {
    const key = `${endpointId} ${sealed}`;
    let secret = this.secrets.get(key);
    if (secret === undefined) {
      secret = this.cipher.decrypt(sealed, endpointId);
      if (this.secrets.size >= MAX_SECRETS) this.secrets.clear();
      this.secrets.set(key, secret);
    }
    return secret;
  }
}

/** The secrets that sign a request now: the current one, then a rotated-out one still in its grace period. */
export function signingSecrets(cipher: Pick<Cipher, "decrypt">, endpointId: string, row: SecretColumns, nowIso: string): string[] {
  const secrets = [cipher.decrypt(row.secret_encrypted, endpointId)];
  if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at > nowIso) {
    secrets.push(cipher.decrypt(row.previous_secret_encrypted, endpointId));
  }
  return secrets;
}
