// Bytes of blob content as they move: a streamed request body as its handler reads it, a reply's
// streamed body as it is sent. Each stream adds up its chunks and reports once, when it ends (or
// fails, or is abandoned): one metric update per request, not per chunk.
import type { Reply } from '../http/respond.js';

/** The same chunks, with their total bytes reported once the stream is done with. */
export async function* countedChunks(
  chunks: AsyncIterable<Buffer>,
  report: (bytes: number) => void,
): AsyncGenerator<Buffer, void, undefined> {
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      bytes += chunk.length;
      yield chunk;
    }
  } finally {
    report(bytes);
  }
}

/** The reply with its body's bytes reported: a stream as it is sent, a buffered body at once. */
export function countedReply(reply: Reply, report: (bytes: number) => void): Reply {
  if (reply.stream !== undefined) return { ...reply, stream: countedChunks(reply.stream, report) };
  if (reply.body !== undefined) report(Buffer.byteLength(reply.body));
  return reply;
}
