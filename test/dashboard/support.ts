import type { TestServer, TestResponse } from "../support/harness";

/** A browser-less dashboard client: keeps the session cookie, reads forms' hidden fields. */
export interface DashboardClient {
  cookie: string | undefined;
  get(path: string, headers?: Record<string, string>): Promise<TestResponse>;
  /** Posts a form; `csrf` and `idempotency_key` come from `page` unless given. */
  post(path: string, fields: Record<string, string>, headers?: Record<string, string>): Promise<TestResponse>;
}

export function dashboardClient(server: TestServer): DashboardClient {
  const client: DashboardClient = {
    cookie: undefined,
    async get(path, headers = {}) {
      return server.request(path, { redirect: "manual", headers: { ...(client.cookie && { cookie: client.cookie }), ...headers } });
    },
    async post(path, fields, headers = {}) {
      const res = await server.request(path, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...(client.cookie && { cookie: client.cookie }), ...headers },
        body: new URLSearchParams(fields).toString(),
      });
      const set = res.headers.get("set-cookie");
      if (set) client.cookie = set.split(";")[0];
      return res;
    },
  };
  return client;
}

/** Signs in with a key over the form; the client keeps the cookie. */
export async function signedIn(server: TestServer, key: string): Promise<DashboardClient> {
  const client = dashboardClient(server);
  const res = await client.post("/dashboard/sign-in", { api_key: key });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return client;
}

/** The value of the first hidden input named `name` in a page (after `after`, when given). */
export function hiddenField(html: string, name: string, after = ""): string {
  const from = after ? html.indexOf(after) : 0;
  const match = new RegExp(`name="${name}" value="([^"]+)"`).exec(html.slice(Math.max(0, from)));
  if (!match) throw new Error(`no ${name} field`);
  return match[1] as string;
}
