// What the server prints once it listens. Tools and tests wait for the first line
// (`Cerulean listening on <table endpoint>`) and read the connection string line after it.
import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ObserveConfig } from './observe/config.js';

/** The Table service's default port: SDKs' UseDevelopmentStorage=true and the tools expect it. */
export const defaultTablePort = 10002;

export interface BannerFacts {
  /** The Table service first, then one per further service. */
  readonly endpoints: readonly {
    readonly service: { readonly name: string; readonly endpointKey: string };
    readonly url: string;
  }[];
  /** `DefaultEndpointsProtocol=…;AccountName=…;AccountKey=…;` */
  readonly accountPart: string;
  readonly explorerUrl: string | undefined;
  /** Where the data lives, in words. */
  readonly data: string;
  readonly features: { readonly observe: ObserveConfig; readonly explorer: boolean };
  readonly scheme: 'http' | 'https';
}

export function banner(facts: BannerFacts): string {
  const [first, ...others] = facts.endpoints;
  const title = (name: string): string => `${name[0]!.toUpperCase()}${name.slice(1)}`;
  const keys = facts.endpoints.map(({ service, url }) => `${service.endpointKey}=${url};`).join('');
  const lines = [
    `Cerulean listening on ${first!.url}`,
    ...others.map(({ service, url }) => `${title(service.name)} endpoint: ${url}`),
    `Connection string: ${facts.accountPart}${keys}`,
    ...portNotes(first!.url, facts.scheme),
    ...(facts.explorerUrl === undefined ? [] : [`Explorer: ${facts.explorerUrl}`]),
    `Features: ${features(facts.features)}`,
    `Data: ${facts.data}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Off the default port, UseDevelopmentStorage=true reaches another port: say what works instead. */
function portNotes(tableUrl: string, scheme: 'http' | 'https'): string[] {
  if (Number(new URL(tableUrl).port) === defaultTablePort) return [];
  const notes = [
    `Note: not port ${defaultTablePort}, so UseDevelopmentStorage=true misses this server: ` +
      'use the connection string above.',
  ];
  if (scheme === 'http') {
    // The SDK refuses to send a credential over plain HTTP unless told to.
    notes.push('Note: over HTTP, the Azure SDK for JavaScript needs the client option allowInsecureConnection: true.');
  }
  return notes;
}

function features({ observe, explorer }: BannerFacts['features']): string {
  const throttle =
    observe.throttle === undefined
      ? 'throttling off'
      : `throttling on (${observe.throttle.partitionPerSecond}/s per partition, ` +
        `${observe.throttle.blobPerSecond}/s per blob, ${observe.throttle.accountPerSecond}/s per account)`;
  return [
    observe.metrics ? 'metrics on (/_metrics, /_insights)' : 'metrics off',
    throttle,
    observe.faultsFile === undefined ? 'no fault rules (/_faults sets them)' : `fault rules from ${observe.faultsFile}`,
    explorer ? 'explorer on' : 'explorer off',
  ].join(', ');
}

/**
 * The line Azurite prints as each of its services listens, after our banner: tools that start an
 * emulator wait for them (the Testcontainers Azurite module). Azurite names the address the socket
 * reports, unbracketed, and its order is Blob, Queue, Table.
 */
export function azuriteListeningLines(
  scheme: 'http' | 'https',
  listeners: readonly { readonly service: { readonly name: string }; readonly server: Server }[],
): string {
  const order = ['blob', 'queue', 'table'];
  const sorted = [...listeners].sort((a, b) => order.indexOf(a.service.name) - order.indexOf(b.service.name));
  const lines = sorted.map(({ service, server }) => {
    const { address, port } = server.address() as AddressInfo;
    const name = `${service.name[0]!.toUpperCase()}${service.name.slice(1)}`;
    return `Azurite ${name} service is successfully listening at ${scheme}://${address}:${port}\n`;
  });
  return lines.join('');
}
