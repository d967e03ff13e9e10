// The ceiling: a bare h3 v2 endpoint that reads a JSON POST body, parses it and
// answers a JSON object of a payment's size, on the same Node and the same HTTP stack
// (srvx's node adapter) as paygate. No database, no auth: what any paygate route pays
// before its own work.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { H3, toNodeHandler } from "h3";

const app = new H3();
app.post("/v1/payments/sale", async (event) => {
  const body = JSON.parse(await event.req.text());
  return {
    id: randomUUID(),
    object: "payment",
    amount: body.amount,
    currency: body.currency,
    status: "succeeded",
    gateway_token: body.gateway_token,
    created_at: new Date().toISOString(),
  };
});
const server = createServer(toNodeHandler(app));
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
