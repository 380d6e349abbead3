// The ceiling: a node:http server that does the least a server can do, so a run against it
// measures only the client, the loopback and node:http on this machine. Run as a child process by
// servers.ts; prints its port once listening.
//
// - Put Blob (a PUT with x-ms-blob-type): without --location it reads the body and drops it,
//   remembering only its length; with --location DIR it writes the body to a file of its own in DIR
//   (a temporary name, fsync, rename), like a durable store's least work (the directory itself is
//   not fsynced). Answers 201 once that is done.
// - GET of a blob put before: without --location it streams that many bytes of the bench's pattern
//   from memory; with --location it streams the file. Both with Content-Length, respecting backpressure.
// - Put Block: the same as Put Blob, each block on its own; Put Block List: 201, nothing more.
// - Create and Delete Container (PUT, DELETE ?restype=container): 201, 202.
// - Anything else: one fixed small JSON body (the Table service's point-read shape).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { patternBytes } from './signed-client.js';

const body = Buffer.from(
  '{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#bench/@Element",' +
    '"PartitionKey":"p","RowKey":"r","Value":1}',
);
const locationFlag = process.argv.indexOf('--location');
/** Where blob bodies go; undefined: they are dropped. */
const location = locationFlag === -1 ? undefined : process.argv[locationFlag + 1];
/** Bytes of each blob put, by request path. */
const blobSizes = new Map<string, number>();

function fileOf(requestPath: string): string {
  return path.join(location!, createHash('sha256').update(requestPath).digest('hex'));
}

async function putBlob(request: http.IncomingMessage, requestPath: string): Promise<void> {
  let sizeBytes = 0;
  if (location === undefined) {
    for await (const chunk of request) sizeBytes += (chunk as Buffer).length;
  } else {
    const file = fileOf(requestPath);
    const handle = await open(`${file}.tmp`, 'w');
    try {
      for await (const chunk of request) {
        await handle.write(chunk as Buffer);
        sizeBytes += (chunk as Buffer).length;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(`${file}.tmp`, file);
  }
  blobSizes.set(requestPath, sizeBytes);
}

async function getBlob(response: http.ServerResponse, requestPath: string, sizeBytes: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': sizeBytes });
  if (location !== undefined) {
    await pipeline(createReadStream(fileOf(requestPath)), response);
    return;
  }
  let left = sizeBytes;
  while (left > 0) {
    const chunk = left >= patternBytes.length ? patternBytes : patternBytes.subarray(0, left);
    left -= chunk.length;
    if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
  }
  response.end();
}

async function answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  // Cheaper than new URL: the table ceiling's point reads pass here too.
  const [pathname = '/', search = ''] = (request.url ?? '/').split('?', 2);
  const comp = new URLSearchParams(search).get('comp');
  if (request.method === 'PUT' && (request.headers['x-ms-blob-type'] !== undefined || comp === 'block')) {
    await putBlob(request, comp === 'block' ? `${pathname}?${search}` : pathname);
    response.writeHead(201, { 'content-length': 0 }).end();
    return;
  }
  const blobSize = request.method === 'GET' ? blobSizes.get(pathname) : undefined;
  if (blobSize !== undefined) return getBlob(response, pathname, blobSize);
  request.resume();
  await new Promise((resolve) => request.on('end', resolve));
  if (comp === 'blocklist' || new URLSearchParams(search).get('restype') === 'container') {
    const status = request.method === 'PUT' ? 201 : request.method === 'DELETE' ? 202 : 200;
    response.writeHead(status, { 'content-length': 0 }).end();
    return;
  }
  response.writeHead(200, {
    'content-type': 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
}

const server = http.createServer((request, response) => {
  answer(request, response).catch((error: unknown) => {
    process.stderr.write(`bare server: ${error instanceof Error ? error.message : String(error)}\n`);
    response.destroy();
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  console.log(`bare server listening on http://127.0.0.1:${address.port}/devstoreaccount1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
