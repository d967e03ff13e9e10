import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/keys/api-keys";
import { SECRET_KEY_SCOPES, type Scope } from "../../server/keys/scopes";
import { createMerchant, type Merchant } from "../../server/merchants/merchants";
import { bootServer, type TestResponse, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { byOperator } from "../../server/audit/audit-actor";

/**
 * Key management over HTTP, every (caller role x mode x scopes) against every
 * (target role x mode x scopes): a key manages only keys of its own merchant and mode
 * whose rights it holds (README, "Merchants, API keys and scopes").
 */
const KINDS = {
  admin_test: { type: "secret", role: "admin", mode: "test" },
  admin_live: { type: "secret", role: "admin", mode: "live" },
  secret_test: { type: "secret", role: "merchant", mode: "test" },
  secret_live: { type: "secret", role: "merchant", mode: "live" },
  narrow_test: { type: "secret", role: "merchant", mode: "test", scopes: ["keys:read", "keys:write"] },
  publishable_test: { type: "publishable", role: "merchant", mode: "test" },
} as const satisfies Record<string, { type: "secret" | "publishable"; role: "admin" | "merchant"; mode: "test" | "live"; scopes?: Scope[] }>;
type Kind = keyof typeof KINDS;
const KIND_NAMES = Object.keys(KINDS) as Kind[];

/** A target is another key of one of the kinds, the calling key itself, or another merchant's secret test key. */
type Target = Kind | "self" | "foreign";
type Outcome = "ok" | 403 | 404;

// Rotate and revoke share one table. 404 = api_key_not_found, 403 = insufficient_permissions.
const MANAGE: Record<Kind, Record<Target, Outcome>> = {
  //                 admin_test  admin_live        secret_test       secret_live       narrow_test       publishable_test        self        foreign
  admin_test:       { admin_test: "ok", admin_live: 404, secret_test: "ok", secret_live: 404, narrow_test: "ok", publishable_test: "ok", self: "ok", foreign: 404 },
  admin_live:       { admin_test: 404, admin_live: "ok", secret_test: 404, secret_live: "ok", narrow_test: 404, publishable_test: 404, self: "ok", foreign: 404 },
  secret_test:      { admin_test: 403, admin_live: 404, secret_test: "ok", secret_live: 404, narrow_test: "ok", publishable_test: "ok", self: "ok", foreign: 404 },
  secret_live:      { admin_test: 404, admin_live: 403, secret_test: 404, secret_live: "ok", narrow_test: 404, publishable_test: 404, self: "ok", foreign: 404 },
  narrow_test:      { admin_test: 403, admin_live: 404, secret_test: 403, secret_live: 404, narrow_test: "ok", publishable_test: 403, self: "ok", foreign: 404 },
  publishable_test: { admin_test: 403, admin_live: 403, secret_test: 403, secret_live: 403, narrow_test: 403, publishable_test: 403, self: 403, foreign: 403 },
};

const NARROW: Scope[] = ["keys:read", "keys:write"];
/** `POST /v1/api-keys` bodies: the new key is the caller's merchant, mode and role merchant. */
const CREATE_REQUESTS = {
  secret_default: { name: "default" },
  secret_all_scopes: { name: "all", scopes: [...SECRET_KEY_SCOPES] },
  narrow: { name: "narrow", scopes: NARROW },
  publishable: { name: "web", type: "publishable" },
  admin_scope: { name: "admin scope", scopes: ["admin"] },
} as const;
type CreateRequest = keyof typeof CREATE_REQUESTS;
type CreateOutcome = "ok" | 400 | 403;

const CREATE: Record<Kind, Record<CreateRequest, CreateOutcome>> = {
  admin_test:       { secret_default: "ok", secret_all_scopes: "ok", narrow: "ok", publishable: "ok", admin_scope: 400 },
  admin_live:       { secret_default: "ok", secret_all_scopes: "ok", narrow: "ok", publishable: "ok", admin_scope: 400 },
  secret_test:      { secret_default: "ok", secret_all_scopes: "ok", narrow: "ok", publishable: "ok", admin_scope: 400 },
  secret_live:      { secret_default: "ok", secret_all_scopes: "ok", narrow: "ok", publishable: "ok", admin_scope: 400 },
  narrow_test:      { secret_default: "ok", secret_all_scopes: 403, narrow: "ok", publishable: 403, admin_scope: 400 },
  publishable_test: { secret_default: 403, secret_all_scopes: 403, narrow: 403, publishable: 403, admin_scope: 403 },
};

/** `POST /admin/merchants/{id}/api-keys`: role and mode as asked; `other_merchant` mints for another merchant in the default mode. */
const ADMIN_CREATE_REQUESTS = {
  admin_role_test: { name: "a", role: "admin", mode: "test" },
  admin_role_live: { name: "a", role: "admin", mode: "live" },
  merchant_test: { name: "m", mode: "test" },
  merchant_live: { name: "m", mode: "live" },
  narrow_default_mode: { name: "n", scopes: NARROW },
  other_merchant: { name: "o" },
} as const;
type AdminCreateRequest = keyof typeof ADMIN_CREATE_REQUESTS;

const ADMIN_CREATE: Record<Kind, Record<AdminCreateRequest, "ok" | 403>> = {
  admin_test:       { admin_role_test: "ok", admin_role_live: 403, merchant_test: "ok", merchant_live: 403, narrow_default_mode: "ok", other_merchant: "ok" },
  admin_live:       { admin_role_test: 403, admin_role_live: "ok", merchant_test: 403, merchant_live: "ok", narrow_default_mode: "ok", other_merchant: "ok" },
  secret_test:      { admin_role_test: 403, admin_role_live: 403, merchant_test: 403, merchant_live: 403, narrow_default_mode: 403, other_merchant: 403 },
  secret_live:      { admin_role_test: 403, admin_role_live: 403, merchant_test: 403, merchant_live: 403, narrow_default_mode: 403, other_merchant: 403 },
  narrow_test:      { admin_role_test: 403, admin_role_live: 403, merchant_test: 403, merchant_live: 403, narrow_default_mode: 403, other_merchant: 403 },
  publishable_test: { admin_role_test: 403, admin_role_live: 403, merchant_test: 403, merchant_live: 403, narrow_default_mode: 403, other_merchant: 403 },
};

const ERROR_CODE: Record<400 | 403 | 404, string> = { 400: "parameter_invalid", 403: "insufficient_permissions", 404: "api_key_not_found" };

interface Key {
  id: string;
  key: string;
  kind: Kind;
}

/** A merchant with one key of every kind to call with, and one of every kind to act on. */
interface World {
  merchant: Merchant;
  callers: Record<Kind, Key>;
  targets: Record<Kind, Key>;
  foreign: Key;
  other: Merchant;
}

describe("key management matrix", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(() => server.stop());

  async function makeKey(merchant: Merchant, kind: Kind, name: string): Promise<Key> {
    const spec = KINDS[kind];
    const created = await createApiKey(
      server.app.db,
      { merchantId: merchant.id, name, type: spec.type, mode: spec.mode, role: spec.role, ...("scopes" in spec && { scopes: [...spec.scopes] }) },
      undefined,
      byOperator(),
    );
    return { id: created.id, key: created.key as string, kind };
  }

  async function makeKeys(merchant: Merchant, prefix: string): Promise<Record<Kind, Key>> {
    const keys = {} as Record<Kind, Key>;
    for (const kind of KIND_NAMES) keys[kind] = await makeKey(merchant, kind, `${prefix} ${kind}`);
    return keys;
  }

  async function world(): Promise<World> {
    const merchant = await createMerchant(server.app.db, "Matrix Merchant", byOperator());
    const other = await createMerchant(server.app.db, "Other Merchant", byOperator());
    return {
      merchant,
      other,
      callers: await makeKeys(merchant, "caller"),
      targets: await makeKeys(merchant, "target"),
      foreign: await makeKey(other, "secret_test", "foreign"),
    };
  }

  function targetKey(w: World, caller: Kind, target: Target): Key {
    if (target === "self") return w.callers[caller];
    if (target === "foreign") return w.foreign;
    return w.targets[target];
  }

  /**
   * What a live key answers on `GET /v1/api-keys`: 200 with keys:read, otherwise 403.
   * Any 401 means the key no longer authenticates.
   */
  async function probe(key: Key): Promise<string> {
    const res = await server.request("/v1/api-keys", { headers: auth(key.key) });
    const body = await res.json();
    return `${res.status} ${body.error?.code ?? ""}`.trim();
  }
  const alive = (kind: Kind) => (kind === "publishable_test" ? "403 insufficient_permissions" : "200");
  const DEAD = "401 invalid_api_key";

  async function outcomeOf(res: TestResponse): Promise<{ got: string; body: any }> {
    const body = await res.json();
    return { got: `${res.status} ${body.error?.code ?? ""}`.trim(), body };
  }

  const want = (outcome: Outcome | CreateOutcome, success: number) => (outcome === "ok" ? `${success}` : `${outcome} ${ERROR_CODE[outcome]}`);
  const targets: Target[] = [...KIND_NAMES, "self", "foreign"];

  describe.each(KIND_NAMES)("caller %s", (callerKind) => {
    it("rotates exactly the keys within its merchant, mode and rights", async () => {
      const failures: string[] = [];
      for (const target of targets) {
        const w = await world();
        const caller = w.callers[callerKind];
        const victim = targetKey(w, callerKind, target);
        const expected = want(MANAGE[callerKind][target], 200);
        const { got, body } = await outcomeOf(await server.request(`/v1/api-keys/${victim.id}/rotate`, { method: "POST", headers: auth(caller.key) }));
        const cell = `rotate ${target}`;
        if (got !== expected) {
          failures.push(`${cell}: got ${got}, want ${expected}`);
          continue;
        }
        if (expected === "200") {
          const rotated: Key = { id: body.id, key: body.key, kind: victim.kind };
          if (body.id !== victim.id || typeof body.key !== "string" || body.key === victim.key) failures.push(`${cell}: not a rotation of ${victim.id}`);
          if ((await probe(rotated)) !== alive(victim.kind)) failures.push(`${cell}: the new plaintext does not work`);
          if ((await probe(victim)) !== DEAD) failures.push(`${cell}: the old plaintext still works`);
        } else if ((await probe(victim)) !== alive(victim.kind)) {
          failures.push(`${cell}: refused, yet the target stopped working`);
        }
      }
      expect(failures).toEqual([]);
    });

    it("revokes exactly the keys within its merchant, mode and rights", async () => {
      const failures: string[] = [];
      for (const target of targets) {
        const w = await world();
        const caller = w.callers[callerKind];
        const victim = targetKey(w, callerKind, target);
        const expected = want(MANAGE[callerKind][target], 200);
        const { got, body } = await outcomeOf(await server.request(`/v1/api-keys/${victim.id}`, { method: "DELETE", headers: auth(caller.key) }));
        const cell = `revoke ${target}`;
        if (got !== expected) {
          failures.push(`${cell}: got ${got}, want ${expected}`);
          continue;
        }
        if (expected === "200") {
          if (body.id !== victim.id || body.status !== "revoked") failures.push(`${cell}: answered ${JSON.stringify(body)}`);
          if ((await probe(victim)) !== DEAD) failures.push(`${cell}: the revoked key still works`);
        } else if ((await probe(victim)) !== alive(victim.kind)) {
          failures.push(`${cell}: refused, yet the target stopped working`);
        }
      }
      expect(failures).toEqual([]);
    });

    it("creates through /v1/api-keys only keys within its own rights and mode", async () => {
      const failures: string[] = [];
      const w = await world();
      const caller = w.callers[callerKind];
      const spec = KINDS[callerKind];
      for (const request of Object.keys(CREATE_REQUESTS) as CreateRequest[]) {
        const body = CREATE_REQUESTS[request];
        const before = await countKeys();
        const expected = want(CREATE[callerKind][request], 201);
        const { got, body: key } = await outcomeOf(await server.request("/v1/api-keys", { method: "POST", headers: auth(caller.key), json: body }));
        const cell = `create ${request}`;
        if (got !== expected) {
          failures.push(`${cell}: got ${got}, want ${expected}`);
          continue;
        }
        if (expected !== "201") {
          if ((await countKeys()) !== before) failures.push(`${cell}: refused, yet a key was stored`);
          continue;
        }
        const publishable = "type" in body;
        const scopes = publishable ? ["tokens:write"] : "scopes" in body ? body.scopes : "scopes" in spec ? spec.scopes : SECRET_KEY_SCOPES;
        const prefix = `${publishable ? "pk" : "sk"}_${spec.mode}_`;
        if (key.mode !== spec.mode || key.role !== "merchant" || !key.key.startsWith(prefix)) failures.push(`${cell}: made ${key.role} ${key.key_prefix}`);
        if ([...key.scopes].sort().join() !== [...scopes].sort().join()) failures.push(`${cell}: scopes ${key.scopes}, want ${scopes}`);
        const made: Key = { id: key.id, key: key.key, kind: publishable ? "publishable_test" : "secret_test" };
        if ((await probe(made)) !== (scopes.includes("keys:read") ? "200" : "403 insufficient_permissions")) failures.push(`${cell}: the new key does not work`);
      }
      expect(failures).toEqual([]);
    });

    it("creates through the admin route only in its own mode", async () => {
      const failures: string[] = [];
      const w = await world();
      const caller = w.callers[callerKind];
      for (const request of Object.keys(ADMIN_CREATE_REQUESTS) as AdminCreateRequest[]) {
        const body = ADMIN_CREATE_REQUESTS[request];
        const merchant = request === "other_merchant" ? w.other : w.merchant;
        const before = await countKeys();
        const outcome = ADMIN_CREATE[callerKind][request];
        const expected = want(outcome, 201);
        const res = await server.request(`/admin/merchants/${merchant.short_id}/api-keys`, { method: "POST", headers: auth(caller.key), json: body });
        const { got, body: key } = await outcomeOf(res);
        const cell = `admin create ${request}`;
        if (got !== expected) {
          failures.push(`${cell}: got ${got}, want ${expected}`);
          continue;
        }
        if (outcome !== "ok") {
          if ((await countKeys()) !== before) failures.push(`${cell}: refused, yet a key was stored`);
          continue;
        }
        const mode = "mode" in body ? body.mode : KINDS[callerKind].mode;
        const role = "role" in body ? body.role : "merchant";
        if (key.role !== role || !key.key.startsWith(`sk_${mode}_`)) failures.push(`${cell}: made ${key.role} ${key.key_prefix}`);
        const list = await server.request("/v1/api-keys", { headers: auth(key.key) });
        const listed = list.status === 200 ? ((await list.json()).data as { id: string }[]).map((k) => k.id) : [];
        if (!listed.includes(key.id)) failures.push(`${cell}: the new key does not work for ${merchant.short_id}`);
      }
      expect(failures).toEqual([]);
    });
  });

  async function countKeys(): Promise<number> {
    const row = await server.app.db.selectFrom("api_keys").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }
});
