import type { Connector, ConnectorId, Mode } from "./connector";
import { mockConnector, simulator } from "./mock";
import { nmiConnector } from "./nmi";
import { stripeConnector } from "./stripe";
import { tsysConnector } from "./tsys";

/** The four connectors of CONTRACT §6. */
export const CONNECTORS: Readonly<Record<ConnectorId, Connector>> = {
  mock: mockConnector,
  stripe: stripeConnector,
  tsys: tsysConnector,
  nmi: nmiConnector,
};

export const CONNECTOR_IDS = Object.keys(CONNECTORS) as ConnectorId[];

export function isConnectorId(value: string): value is ConnectorId {
  return Object.hasOwn(CONNECTORS, value);
}

const SIMULATED: Readonly<Record<ConnectorId, Connector>> = Object.fromEntries(
  CONNECTOR_IDS.map((id) => [id, id === "mock" ? mockConnector : simulator(id, CONNECTORS[id].keyKinds)]),
) as Record<ConnectorId, Connector>;

/** What actually answers a call: the real processor in live mode, the simulator in test mode. */
export function connectorFor(id: ConnectorId, mode: Mode): Connector {
  return mode === "live" ? CONNECTORS[id] : SIMULATED[id];
}
