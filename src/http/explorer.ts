// The web explorer's static files at /_explorer/ (docs/explorer.md). The explorer is a client of the public
// REST API: the browser signs its own requests with the key the user types, so nothing here reads
// the store or knows a key. Assets are looked up by exact name in a fixed table built at startup,
// so no request path can reach any other file. The dynamic assets are accounts.json: account
// NAMES (never keys), so the account picker can offer every configured account; and endpoints.json:
// each service's port, so the page can call the services on their own ports (explorer-origin.ts).
import { readFileSync, readdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StorageError } from '../errors.js';
import { ownOrigins, type ListenerPort } from './explorer-origin.js';
import { errorReply, type Reply, type ResponseContext } from './respond.js';

export const explorerPath = '/_explorer/';

/** Hand-written pages and styles, and the browser modules `tsc -p explorer/tsconfig.json` writes. */
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const assetDirs = [join(repoRoot, 'explorer', 'static'), join(repoRoot, 'dist', 'explorer')];

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * No inline script or style, nothing from elsewhere, no framing, no plugins: data shown as text
 * could not run even if a bug rendered it as markup.
 */
function contentSecurityPolicy(connectOrigins: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    // The other services' ports of this server (explorer-origin.ts), and nothing else.
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const securityHeaders: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

interface Asset {
  readonly contentType: string;
  readonly body: Buffer;
}

export interface Explorer {
  /** Whether this request is for the explorer (its path starts with /_explorer). */
  claims(rawPath: string): boolean;
  /**
   * The file the request names, or an Azure-style error (the caller sends it). `listeners`: every
   * service listener of this server that is listening, for endpoints.json and the page's CSP.
   */
  reply(request: IncomingMessage, context: ResponseContext, listeners: readonly ListenerPort[]): Reply;
}

/**
 * Loads the assets once, at startup. Without a build of the browser modules the explorer is off
 * (with a warning), not the server: the REST API does not depend on it.
 */
export function createExplorer(accountNames: readonly string[], warn: (message: string) => void): Explorer | undefined {
  const assets = loadAssets();
  if (!assets.has('index.html') || !assets.has('app.js')) {
    warn(`explorer off: its files are missing under ${assetDirs.join(' and ')} (npm run build makes them)`);
    return undefined;
  }
  assets.set('accounts.json', {
    contentType: 'application/json; charset=utf-8',
    body: Buffer.from(JSON.stringify({ accounts: accountNames })),
  });
  return {
    claims: (rawPath) => rawPath === '/_explorer' || rawPath.startsWith(explorerPath),
    reply: (request, context, listeners) => {
      const csp = contentSecurityPolicy(ownOrigins(request, listeners));
      const lookup = (name: string) => (name === 'endpoints.json' ? endpointsAsset(listeners) : assets.get(name));
      const reply = answer(lookup, request, context);
      return { ...reply, headers: { ...reply.headers, ...securityHeaders, 'Content-Security-Policy': csp } };
    },
  };
}

function answer(
  lookup: (name: string) => Asset | undefined,
  request: IncomingMessage,
  context: ResponseContext,
): Reply {
  const url = request.url ?? '/';
  const rawPath = url.split('?', 1)[0]!;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return errorReply(context, new StorageError('MethodNotAllowed'));
  }
  if (rawPath === '/_explorer') return { status: 301, headers: { Location: explorerPath } };
  const name = rawPath.slice(explorerPath.length) || 'index.html';
  const asset = lookup(name);
  if (asset === undefined) {
    return errorReply(context, new StorageError('ResourceNotFound', 'The explorer has no such file.'));
  }
  return {
    status: 200,
    headers: { 'Content-Type': asset.contentType },
    body: request.method === 'HEAD' ? undefined : asset.body,
  };
}

/** `{"services": [{"service": "table", "port": 10002}, …]}`: ports only, the page keeps its own host name. */
function endpointsAsset(listeners: readonly ListenerPort[]): Asset {
  return {
    contentType: 'application/json; charset=utf-8',
    body: Buffer.from(JSON.stringify({ services: listeners })),
  };
}

/** Every file of the asset folders whose extension has a content type, by bare file name. */
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const dir of assetDirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const contentType = contentTypes[extname(name)];
      if (contentType !== undefined) assets.set(name, { contentType, body: readFileSync(join(dir, name)) });
    }
  }
  return assets;
}
