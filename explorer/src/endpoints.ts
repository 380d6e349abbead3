// Where this server's other services answer. Each service's REST API is on its own port; the page
// learns the ports from /_explorer/endpoints.json and keeps its own scheme and host name, so the
// server grants these calls CORS as coming from its own page (docs/explorer.md).
export type ServiceName = 'table' | 'queue' | 'blob';

let loaded: Promise<ReadonlyMap<string, number>> | undefined;

function ports(): Promise<ReadonlyMap<string, number>> {
  loaded ??= fetch('endpoints.json', { cache: 'no-store' })
    .then((response) => response.json() as Promise<{ services: { service: string; port: number }[] }>)
    .then((body) => new Map(body.services.map(({ service, port }) => [service, port])))
    .catch(() => new Map());
  return loaded;
}

/** The origin of `service` on this server, as this page reaches it; undefined when it serves no such service. */
export async function serviceOrigin(service: ServiceName): Promise<string | undefined> {
  const port = (await ports()).get(service);
  return port === undefined ? undefined : `${location.protocol}//${location.hostname}:${port}`;
}
