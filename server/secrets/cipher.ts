import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";

/** Decryption failed: the master key is not the one the data was written with, or the data was altered. */
export class WrongMasterKeyError extends Error {
  constructor() {
    super("cannot decrypt stored data: the master key (PAYGATE_MASTER_KEY or the data dir's master.key) is not the one it was encrypted with");
    this.name = "WrongMasterKeyError";
  }
}

/**
 * AES-256-GCM with the master key. Ciphertexts read `v1.<key id>.<base64 iv|tag|data>`,
 * where the key id (first bytes of the key's SHA-256) lets a wrong key be named as
 * such instead of producing garbage. `aad` binds a ciphertext to what it belongs to
 * (a secret's path, a token), so one cannot be swapped for another.
 */
export class Cipher {
  private readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the master key must be 32 bytes");
    this.keyId = createHash("sha256").update(key).digest("hex").slice(0, 8);
  }

  /**
   * A 32-byte key for another purpose, derived from the master key (HKDF-SHA256):
   * each `label` gives an independent key, and none reveals the master key.
   */
  deriveKey(label: string): Buffer {
    return Buffer.from(hkdfSync("sha256", this.key, Buffer.alloc(0), label, 32));
  }

  encrypt(plaintext: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${VERSION}.${this.keyId}.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64")}`;
  }

  /** Whether `sealed` was written with this key (judged by its key id, without decrypting). */
  sealedWithThisKey(sealed: string): boolean {
    const [version, keyId] = sealed.split(".");
    return version === VERSION && keyId === this.keyId;
  }

  decrypt(sealed: string, aad: string): string {
    const [version, keyId, payload] = sealed.split(".");
    if (version !== VERSION || payload === undefined || keyId !== this.keyId) throw new WrongMasterKeyError();
    const bytes = Buffer.from(payload, "base64");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, 12));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
    } catch {
      throw new WrongMasterKeyError();
    }
  }
}
