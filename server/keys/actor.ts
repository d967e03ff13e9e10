import type { Mode } from "../connectors/connector";
import type { Scope } from "./scopes";

export type KeyType = "secret" | "publishable";
export type Role = "merchant" | "admin";

/**
 * Who is calling, as established by authentication: the key, its merchant, its mode
 * (test keys act in the sandbox) and what it may do. Every service takes one.
 */
export interface Actor {
  apiKeyId: string;
  merchantId: string;
  merchantShortId: string;
  mode: Mode;
  role: Role;
  keyType: KeyType;
  scopes: ReadonlySet<Scope>;
}

/** The actor of public routes (health): no merchant, no scope. */
export const ANONYMOUS: Actor = {
  apiKeyId: "",
  merchantId: "",
  merchantShortId: "",
  mode: "test",
  role: "merchant",
  keyType: "publishable",
  scopes: new Set(),
};
