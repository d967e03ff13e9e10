import { X509Certificate, createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { listen } from "listhen";
import type { NodeHandler } from "h3";
import { ConfigError, type Config, type TlsFile } from "../config";

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

/** A certificate and its private key, PEM. */
export interface TlsPem {
  cert: string;
  key: string;
}

function readPem(file: TlsFile): string {
  let text: string;
  try {
    text = readFileSync(file.path, "utf8");
  } catch (error) {
    throw new ConfigError(file.setting, `cannot read ${file.path} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  // listhen takes a value starting with "--" as PEM text and anything else as a path.
  const begin = text.indexOf("-----BEGIN");
  if (begin < 0) throw new ConfigError(file.setting, `${file.path} is not a PEM file`);
  return text.slice(begin);
}

/**
 * Reads and checks the certificate and key before anything starts, so a wrong file
 * stops `serve` with one line naming the setting instead of a TLS error per request.
 */
export function readTls(tls: NonNullable<Config["tls"]>): TlsPem {
  const cert = readPem(tls.cert);
  const key = readPem(tls.key);
  let certificate: X509Certificate;
  let privateKey: KeyObject;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new ConfigError(tls.cert.setting, `${tls.cert.path} holds no readable X.509 certificate`);
  }
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(tls.key.setting, `${tls.key.path} holds no readable private key (an encrypted key is not supported)`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(tls.key.setting, `${tls.key.path} is not the private key of the certificate in ${tls.cert.path} (${tls.cert.setting})`);
  }
  return { cert, key };
}

export async function listenOn(handler: NodeHandler, host: string, port: number, tls?: TlsPem): Promise<Listening> {
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
      ...(tls && { https: tls }),
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
