// Where this server's services answer. Each service's REST API is on its own port; the page
// learns the ports from /_explorer/endpoints.json once, at start, and keeps its own scheme and host
// name, so the server grants these calls CORS as coming from its own page (docs/explorer.md).
export type ServiceName = 'table' | 'queue' | 'blob';

let ports: ReadonlyMap<string, number> = new Map();

/** Reads endpoints.json; without it (an older server) every call goes to the page's own origin. */
export async function loadEndpoints(): Promise<void> {
  try {
    const response = await fetch('endpoints.json', { cache: 'no-store' });
    const body = (await response.json()) as { services: { service: string; port: number }[] };
    ports = new Map(body.services.map(({ service, port }) => [service, port]));
  } catch {
    ports = new Map();
  }
}

/** The origin of `service` on this server, as this page reaches it; undefined when it serves no such service. */
export function serviceOrigin(service: ServiceName): string | undefined {
  const port = ports.get(service);
  return port === undefined ? undefined : `${location.protocol}//${location.hostname}:${port}`;
}

/** The Table service's origin: the page may have been loaded from another service's port. */
export function tableOrigin(): string {
  return serviceOrigin('table') ?? location.origin;
}
