import type { Server } from "node:http";
import { listen } from "listhen";
import type { NodeHandler } from "h3";

export class PortInUseError extends Error {}

export interface Listening {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void>;
}

/**
 * listhen's `http-shutdown` hooks throw (uncaught, killing the process) when a
 * response finishes after its socket is gone, as when a 413 is answered before the
 * body is read. paygate shuts down with Node's own API instead, so they are removed.
 */
function removeHttpShutdownHooks(server: Server): void {
  const [handler] = server.listeners("request");
  server.removeAllListeners("request");
  if (handler) server.on("request", handler as (...args: unknown[]) => void);
  for (const event of ["connection", "secureConnection"]) {
    for (const listener of server.listeners(event)) {
      if ((listener as { name?: string }).name === "onConnection") server.off(event, listener as (...args: unknown[]) => void);
    }
  }
}

export async function listenOn(handler: NodeHandler, host: string, port: number): Promise<Listening> {
  // An explicit port is used or refused, never silently swapped for another one.
  const portOption = port === 0 ? { port: 0, random: true } : { port, random: false, ports: [], portRange: [], alternativePortRange: [] };
  let server: Server;
  try {
    const listener = await listen(handler, {
      hostname: host,
      port: portOption as unknown as number,
      showURL: false,
      qr: false,
      open: false,
      clipboard: false,
      public: false,
      autoClose: false,
      isTest: true,
    });
    server = listener.server as Server;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || (error as Error).name === "GetPortError") {
      throw new PortInUseError(`port ${port} on ${host} is already in use`);
    }
    throw error;
  }
  removeHttpShutdownHooks(server);
  const address = server.address();
  return {
    server,
    port: typeof address === "object" && address ? address.port : port,
    async close(graceMs) {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets become idle as their last response ends: close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      await stopped;
      clearInterval(sweep);
      clearTimeout(force);
    },
  };
}
