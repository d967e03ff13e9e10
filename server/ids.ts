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

const SORTABLE_TIME = 9;
const SORTABLE_COUNTER = 4;

/**
 * `prefix` + milliseconds (9 base-36 digits) + a per-millisecond counter (4) + 11
 * random characters: ids sort in the order this process made them, even within one
 * millisecond, so "newest first" is exact. The counter is this process's alone: an id
 * that must sort after one another process made (the previous event of a payment)
 * passes that one as `after` and is placed past it, whatever the two clocks say.
 */
function sortableId(prefix: string, after?: string): string {
  const wall = Date.now();
  let now = wall;
  let minCounter = 0;
  if (after !== undefined) {
    const afterMs = parseInt(after.slice(prefix.length, prefix.length + SORTABLE_TIME), 36);
    if (now <= afterMs) {
      now = afterMs;
      minCounter = parseInt(after.slice(prefix.length + SORTABLE_TIME, prefix.length + SORTABLE_TIME + SORTABLE_COUNTER), 36) + 1;
    }
  }
  const counter = Math.max(minCounter, now === lastSortableMs ? sortableCounter + 1 : 0);
  // An id placed ahead of this clock is a one-off: the ids after it keep this clock's time.
  if (now === wall && now >= lastSortableMs) {
    sortableCounter = counter;
    lastSortableMs = now;
  }
  return `${prefix}${now.toString(36).padStart(SORTABLE_TIME, "0")}${counter.toString(36).padStart(SORTABLE_COUNTER, "0")}${randomAlphanumeric(11)}`;
}

/** When a sortable id was made (its milliseconds part), as the store's ISO timestamp. */
export const sortableIdTime = (prefix: string, id: string): string => new Date(parseInt(id.slice(prefix.length, prefix.length + SORTABLE_TIME), 36)).toISOString();

/** An event id; `after`: the id it must sort after (the payment's previous event). */
export const newEventId = (after?: string): string => sortableId("evt_", after);
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
