// The digest thread: MD5 and CRC64 of large request bodies, computed beside the thread that serves
// HTTP, so hashing a 64 MiB upload (about 100 ms of MD5 alone) overlaps reading it from the socket
// and writing it to disk instead of adding to them. Started by content/digests.ts; one for the process.
//
// Pieces come and go by transfer (content/digest-messages.ts), never copied and never kept here.
import assert from 'node:assert/strict';
import { parentPort } from 'node:worker_threads';
import type { DigestAnswer, DigestRequest } from './digest-messages.js';
import { InlineDigester } from './digests.js';

const port = parentPort;
assert(port !== null, 'digest-thread.js runs as a worker thread');

const running = new Map<number, InlineDigester>();

function answer(message: DigestAnswer): void {
  port!.postMessage(message, message.kind === 'updated' ? [message.bytes.buffer as ArrayBuffer] : []);
}

port.on('message', (request: DigestRequest) => {
  switch (request.kind) {
    case 'start':
      running.set(request.id, new InlineDigester(request));
      return;
    case 'update': {
      const digests = running.get(request.id);
      assert(digests !== undefined, 'an update follows its start');
      answer({ kind: 'updated', id: request.id, bytes: digests.update(request.bytes) });
      return;
    }
    case 'finish': {
      const digests = running.get(request.id);
      running.delete(request.id);
      assert(digests !== undefined, 'a finish follows its start');
      answer({ kind: 'finished', id: request.id, ...digests.digests() });
      return;
    }
    case 'abandon':
      running.delete(request.id);
      return;
  }
});
