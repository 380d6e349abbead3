// The digest thread: MD5 and CRC64 of large request bodies, computed beside the thread that serves
// HTTP, so hashing a 64 MiB upload (about 100 ms of MD5 alone) overlaps reading it from the socket
// and writing it to disk instead of adding to them. Started by digests.ts; one for the process.
//
// Pieces come and go by transfer (digest-messages.ts), never copied and never kept here.
import assert from 'node:assert/strict';
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { Crc64 } from './crc64.js';
import type { DigestAnswer, DigestRequest } from './digest-messages.js';

const port = parentPort;
assert(port !== null, 'digest-thread.js runs as a worker thread');

const running = new Map<number, { md5: Hash | undefined; crc64: Crc64 | undefined }>();

function answer(message: DigestAnswer): void {
  port!.postMessage(message, message.kind === 'updated' ? [message.bytes.buffer as ArrayBuffer] : []);
}

port.on('message', (request: DigestRequest) => {
  switch (request.kind) {
    case 'start':
      running.set(request.id, {
        md5: request.md5 ? createHash('md5') : undefined,
        crc64: request.crc64 ? new Crc64() : undefined,
      });
      return;
    case 'update': {
      const digests = running.get(request.id);
      assert(digests !== undefined, 'an update follows its start');
      digests.md5?.update(request.bytes);
      digests.crc64?.update(request.bytes);
      answer({ kind: 'updated', id: request.id, bytes: request.bytes });
      return;
    }
    case 'finish': {
      const digests = running.get(request.id);
      running.delete(request.id);
      assert(digests !== undefined, 'a finish follows its start');
      answer({ kind: 'finished', id: request.id, md5: digests.md5?.digest(), crc64: digests.crc64?.digest() });
      return;
    }
    case 'abandon':
      running.delete(request.id);
      return;
  }
});
