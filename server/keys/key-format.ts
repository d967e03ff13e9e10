import { createHash } from "node:crypto";
import { randomString } from "../ids";
import type { Mode } from "../connectors/connector";
import type { KeyType } from "./actor";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const SECRET_LENGTH = 32;
const KEY_PATTERN = /^(sk|pk)_(test|live)_[A-Za-z0-9]{32}$/;

export function keyPrefix(type: KeyType, mode: Mode): string {
  return `${type === "secret" ? "sk" : "pk"}_${mode}_`;
}

/** A new plaintext key: prefix + 32 base62 characters (~190 bits) from the CSPRNG. */
export function generateKey(type: KeyType, mode: Mode): string {
  return keyPrefix(type, mode) + randomString(BASE62, SECRET_LENGTH);
}

/**
 * Keys are found by the SHA-256 of their plaintext: the database compares hashes,
 * whose bits an attacker cannot steer, so the look-up is no timing oracle on the key.
 */
export function hashKey(plaintext: string): string {
  return createHash("sha256").update(plaintext).digest("hex");
}

/** Whether a presented key has one of the four prefixes and the right shape. */
export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
