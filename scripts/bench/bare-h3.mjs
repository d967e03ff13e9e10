// The ceiling: a bare h3 v2 endpoint answering a small JSON body, on the same Node
// and the same HTTP stack (srvx's node adapter) as paygate.
import { createServer } from "node:http";
import { H3, toNodeHandler } from "h3";

const app = new H3();
app.get("/ping", () => ({ status: "ok", service: "bare-h3" }));
const server = createServer(toNodeHandler(app));
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
