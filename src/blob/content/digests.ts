// The MD5 and CRC64 of content as it streams through: on this thread for small bodies, on the
// digest thread (content/digest-thread.ts) for large ones, where hashing overlaps the socket and the disk.
import assert from 'node:assert/strict';
import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { Crc64 } from './crc64.js';
import type { DigestAnswer, DigestRequest } from './digest-messages.js';

export interface DigestsWanted {
  readonly md5: boolean;
  readonly crc64: boolean;
}

export interface Digests {
  readonly md5: Buffer | undefined;
  readonly crc64: Buffer | undefined;
}

export interface Digester {
  /**
   * Feeds the next bytes, in order, and gives them back once hashed: at once on this thread; on the
   * digest thread, later, as a new Buffer over the same memory, and the caller must not touch
   * `bytes` meanwhile (it is transferred there and back).
   */
  update(bytes: Buffer): Buffer | Promise<Buffer>;
  finish(): Promise<Digests>;
  /** Drops the digests of a body that failed; the digester takes no more calls. */
  abandon(): void;
}

/**
 * A digester on this thread, or (`offThread`) on the digest thread, which takes only bytes that own
 * their whole ArrayBuffer (as Buffer.allocUnsafeSlow makes them), so they can be transferred.
 */
export function digester(wanted: DigestsWanted, offThread: boolean): Digester {
  return offThread ? DigestThread.shared().start(wanted) : new InlineDigester(wanted);
}

/** MD5 and CRC64 on the calling thread: the digester for small bodies, and the digest thread's own. */
export class InlineDigester implements Digester {
  private readonly md5: Hash | undefined;
  private readonly crc64: Crc64 | undefined;

  constructor(wanted: DigestsWanted) {
    this.md5 = wanted.md5 ? createHash('md5') : undefined;
    this.crc64 = wanted.crc64 ? new Crc64() : undefined;
  }

  update<Bytes extends Uint8Array>(bytes: Bytes): Bytes {
    this.md5?.update(bytes);
    this.crc64?.update(bytes);
    return bytes;
  }

  /** The digests of everything fed so far; the digester takes no more calls. */
  digests(): Digests {
    return { md5: this.md5?.digest(), crc64: this.crc64?.digest() };
  }

  async finish(): Promise<Digests> {
    return this.digests();
  }

  abandon(): void {}
}

/** The process's digest thread, started on first use; it does not keep the process alive. */
class DigestThread {
  private static current: DigestThread | undefined;
  private readonly bodies = new Map<number, ThreadDigester>();
  private nextId = 1;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (answer: DigestAnswer) => this.bodies.get(answer.id)?.answered(answer));
    const fail = (error: Error): void => {
      if (DigestThread.current === this) DigestThread.current = undefined;
      for (const body of this.bodies.values()) body.failed(error);
      this.bodies.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the digest thread exited with code ${code}`)));
    // Held open only while a body is being hashed (start, forget), not by an idle thread.
    worker.unref();
  }

  static shared(): DigestThread {
    DigestThread.current ??= new DigestThread(new Worker(new URL('./digest-thread.js', import.meta.url)));
    return DigestThread.current;
  }

  start(wanted: DigestsWanted): ThreadDigester {
    const id = this.nextId++;
    const forget = (): void => {
      if (this.bodies.delete(id) && this.bodies.size === 0) this.worker.unref();
    };
    const body = new ThreadDigester(id, (request, transfer) => this.worker.postMessage(request, transfer), forget);
    if (this.bodies.size === 0) this.worker.ref();
    this.bodies.set(id, body);
    this.worker.postMessage({ kind: 'start', id, ...wanted } satisfies DigestRequest);
    return body;
  }
}

class ThreadDigester implements Digester {
  /** The updates not answered yet, oldest first (the thread answers in order). */
  private readonly waiting: { resolve(bytes: Buffer): void; reject(error: Error): void }[] = [];
  private finished: { resolve(digests: Digests): void; reject(error: Error): void } | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly id: number,
    private readonly send: (request: DigestRequest, transfer: ArrayBuffer[]) => void,
    private readonly forget: () => void,
  ) {}

  update(bytes: Buffer): Promise<Buffer> {
    assert(
      bytes.byteOffset === 0 && !(bytes.buffer instanceof SharedArrayBuffer),
      'a piece owns its whole ArrayBuffer, to be transferred',
    );
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.send({ kind: 'update', id: this.id, bytes }, [bytes.buffer]);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  finish(): Promise<Digests> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.send({ kind: 'finish', id: this.id }, []);
    return new Promise((resolve, reject) => (this.finished = { resolve, reject }));
  }

  abandon(): void {
    this.forget();
    if (this.failure === undefined) this.send({ kind: 'abandon', id: this.id }, []);
  }

  answered(answer: DigestAnswer): void {
    if (answer.kind === 'updated') {
      const { buffer, byteOffset, byteLength } = answer.bytes;
      this.waiting.shift()?.resolve(Buffer.from(buffer, byteOffset, byteLength));
      return;
    }
    this.forget();
    const buffer = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes));
    this.finished?.resolve({ md5: buffer(answer.md5), crc64: buffer(answer.crc64) });
  }

  failed(error: Error): void {
    this.failure = error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    this.finished?.reject(error);
  }
}
