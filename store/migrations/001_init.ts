import { sql, type Kysely, type Migration } from "kysely";

/**
 * The whole initial schema. Written with kysely's schema builder (no SQLite-only SQL)
 * so that a PostgreSQL dialect can run the same migration.
 */
export const initMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("settings")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("merchants")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("short_id", "text", (c) => c.notNull().unique())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("scopes", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_prefix", "text", (c) => c.notNull())
      .addColumn("last4", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_used_at", "text")
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("api_keys_merchant").on("api_keys").columns(["merchant_id", "created_at"]).execute();

    await db.schema
      .createTable("idempotency_keys")
      .addColumn("api_key_id", "text", (c) => c.notNull())
      .addColumn("method", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("locked_at", "bigint", (c) => c.notNull())
      .addColumn("response_status", "integer")
      .addColumn("response_headers", "text")
      .addColumn("response_body", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["api_key_id", "method", "path", "key"])
      .execute();
    await db.schema.createIndex("idempotency_keys_expiry").on("idempotency_keys").column("expires_at").execute();

    await db.schema
      .createTable("secrets")
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("ciphertext", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("secrets_pk", ["path", "version"])
      .execute();

    await db.schema
      .createTable("connector_accounts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("short_id", "text", (c) => c.notNull().unique())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("connector_id", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("key_kind", "text", (c) => c.notNull())
      .addColumn("label", "text", (c) => c.notNull())
      .addColumn("is_default", "integer", (c) => c.notNull())
      .addColumn("credential_ref", "text", (c) => c.notNull())
      .addColumn("is_active", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    // The database, not the service, guarantees the spec's two uniqueness rules, so two
    // racing writers cannot both win.
    await db.schema
      .createIndex("connector_accounts_one_default")
      .on("connector_accounts")
      .columns(["merchant_id", "connector_id", "mode", "key_kind"])
      .unique()
      .where(sql.ref("is_default"), "=", 1)
      .execute();
    await db.schema
      .createIndex("connector_accounts_label")
      .on("connector_accounts")
      .columns(["merchant_id", "connector_id", "mode", "label"])
      .unique()
      .where(sql.ref("is_active"), "=", 1)
      .execute();

    await db.schema
      .createTable("routing")
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("connectors", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("routing_pk", ["merchant_id", "mode"])
      .execute();

    await db.schema
      .createTable("card_tokens")
      .addColumn("token", "text", (c) => c.primaryKey())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("pan_encrypted", "text", (c) => c.notNull())
      .addColumn("bin_prefix", "text", (c) => c.notNull())
      .addColumn("last4", "text", (c) => c.notNull())
      .addColumn("exp_month", "integer", (c) => c.notNull())
      .addColumn("exp_year", "integer", (c) => c.notNull())
      .addColumn("card_brand", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("payments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("amount", "integer", (c) => c.notNull())
      .addColumn("amount_captured", "integer", (c) => c.notNull())
      .addColumn("amount_refunded", "integer", (c) => c.notNull())
      .addColumn("currency", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("capture_method", "text", (c) => c.notNull())
      .addColumn("connector_id", "text", (c) => c.notNull())
      .addColumn("connector_account_id", "text", (c) => c.notNull().references("connector_accounts.id"))
      .addColumn("gateway_token", "text", (c) => c.notNull())
      .addColumn("card_brand", "text", (c) => c.notNull())
      .addColumn("card_last4", "text", (c) => c.notNull())
      .addColumn("card_exp_month", "integer", (c) => c.notNull())
      .addColumn("card_exp_year", "integer", (c) => c.notNull())
      .addColumn("connector_transaction_id", "text")
      .addColumn("failure_code", "text")
      .addColumn("failure_message", "text")
      .addColumn("description", "text")
      .addColumn("metadata", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("payments_list").on("payments").columns(["merchant_id", "mode", "created_at", "id"]).execute();

    await db.schema
      .createTable("refunds")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("payment_id", "text", (c) => c.notNull().references("payments.id"))
      .addColumn("amount", "integer", (c) => c.notNull())
      .addColumn("reason", "text")
      .addColumn("connector_refund_id", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("refunds_payment").on("refunds").column("payment_id").execute();

    await db.schema
      .createTable("events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("payment_id", "text")
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("events_list").on("events").columns(["merchant_id", "mode", "created_at", "id"]).execute();

    await db.schema
      .createTable("webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("merchant_id", "text", (c) => c.notNull().references("merchants.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("event_types", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("secret_encrypted", "text", (c) => c.notNull())
      .addColumn("previous_secret_encrypted", "text")
      .addColumn("previous_secret_expires_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text")
      .execute();
    await db.schema.createIndex("webhook_endpoints_merchant").on("webhook_endpoints").columns(["merchant_id", "mode"]).execute();

    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("event_id", "text", (c) => c.notNull().references("events.id"))
      .addColumn("endpoint_id", "text", (c) => c.notNull().references("webhook_endpoints.id"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "bigint")
      .addColumn("leased_until", "bigint")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("webhook_deliveries_due").on("webhook_deliveries").columns(["status", "next_attempt_at"]).execute();
    await db.schema.createIndex("webhook_deliveries_event").on("webhook_deliveries").column("event_id").execute();

    await db.schema
      .createTable("webhook_attempts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("delivery_id", "text", (c) => c.notNull().references("webhook_deliveries.id"))
      .addColumn("attempted_at", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addColumn("error", "text")
      .addColumn("response_excerpt", "text")
      .execute();
    await db.schema.createIndex("webhook_attempts_delivery").on("webhook_attempts").column("delivery_id").execute();
  },
};
