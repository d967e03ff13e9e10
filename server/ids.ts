import { z } from "zod";
import { randomBytes, randomUUID } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** CSPRNG bytes drawn in blocks: one system call per 4 KiB instead of one per id. */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/**
 * `length` characters of `alphabet` from the CSPRNG. Bytes at or above the largest
 * multiple of the alphabet's size are rejected, so every character is uniform.
 */
export function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < limit) out += alphabet[byte % alphabet.length];
  }
  return out;
}

/** `length` characters of [a-z0-9] from the CSPRNG. */
export const randomAlphanumeric = (length: number): string => randomString(ALPHABET, length);

export const newUuid = (): string => randomUUID();
export const newMerchantShortId = (): string => `mrc_${randomAlphanumeric(10)}`;
export const newAccountShortId = (): string => `ca_${randomAlphanumeric(10)}`;
export const newApiKeyId = (): string => `key_${randomAlphanumeric(16)}`;
let lastSortableMs = 0;
let sortableCounter = 0;

/**
 * `prefix` + milliseconds (9 base-36 digits) + a per-millisecond counter (4) + 11
 * random characters: ids sort in the order they were made, even within one
 * millisecond, so "newest first" and per-payment event order are exact.
 */
function sortableId(prefix: string): string {
  const now = Date.now();
  sortableCounter = now === lastSortableMs ? sortableCounter + 1 : 0;
  lastSortableMs = now;
  return `${prefix}${now.toString(36).padStart(9, "0")}${sortableCounter.toString(36).padStart(4, "0")}${randomAlphanumeric(11)}`;
}
export const newEventId = (): string => sortableId("evt_");
export const newAuditId = (): string => sortableId("aud_");
export const newWebhookEndpointId = (): string => `we_${randomAlphanumeric(16)}`;
export const newDeliveryId = (): string => `whd_${randomAlphanumeric(20)}`;
export const newAttemptId = (): string => `wha_${randomAlphanumeric(20)}`;
export const newRequestId = (): string => `req_${randomAlphanumeric(20)}`;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API and the store. */
export const isoNow = (): string => new Date().toISOString();
/** How every timestamp leaves the API: ISO 8601 in UTC. */
export const timestamp = z.iso.datetime();
