import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { RUNTIME } from "./runtime";

const check = z.enum(["ok", "error"]);
type Check = z.infer<typeof check>;
const readiness = z.object({ status: z.enum(["ready", "degraded"]), checks: z.object({ database: check, cache: check }) });

/** Each dependency readiness depends on, checked for real on every call. */
async function readinessChecks(app: AppContext): Promise<Record<string, Check>> {
  const database = await checkDatabase(app);
  const cache = await app.cache.ping().then(
    (ok) => (ok ? "ok" : "error") as Check,
    () => "error" as Check,
  );
  return { database, cache };
}

async function checkDatabase(app: AppContext): Promise<Check> {
  // A deleted or replaced database file would still answer queries from the open
  // handle while every write is lost at restart, so the file itself is checked too.
  if (!app.store.isInPlace()) return "error";
  try {
    await app.db.selectFrom("merchants").select("id").limit(1).execute();
    return "ok";
  } catch {
    return "error";
  }
}

export function healthRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/health",
      scope: null,
      summary: "Liveness: the process answers",
      responses: { 200: z.object({ status: z.literal("ok"), service: z.literal("paygate"), version: z.string(), node: z.string() }) },
      handle: async () => ({ status: "ok", service: "paygate", version: RUNTIME.version, node: RUNTIME.node }),
      present: (body) => json(200, body),
    }),
    route({
      method: "GET",
      path: "/health/ready",
      scope: null,
      summary: "Readiness: the database and the cache answer",
      responses: { 200: readiness, 503: readiness },
      handle: () => readinessChecks(app),
      present: (checks) => {
        const ready = Object.values(checks).every((c) => c === "ok");
        return json(ready ? 200 : 503, { status: ready ? "ready" : "degraded", checks });
      },
    }),
  ];
}
