// The MD5 and CRC64 of content as it streams through: on this thread for small bodies, on the
// digest thread (digest-thread.ts) for large ones, where hashing overlaps the socket and the disk.
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
  /** Feeds the next bytes, in order; a promise means: wait for it before feeding more. */
  update(bytes: Buffer): Promise<void> | undefined;
  finish(): Promise<Digests>;
  /** Drops the digests of a body that failed; the digester takes no more calls. */
  abandon(): void;
}

/**
 * A digester on this thread, or (`offThread`) on the digest thread, which takes only bytes that lie
 * in a SharedArrayBuffer and are left unchanged until the next update's promise settles.
 */
export function digester(wanted: DigestsWanted, offThread: boolean): Digester {
  return offThread ? DigestThread.shared().start(wanted) : new InlineDigester(wanted);
}

class InlineDigester implements Digester {
  private readonly md5: Hash | undefined;
  private readonly crc64: Crc64 | undefined;

  constructor(wanted: DigestsWanted) {
    this.md5 = wanted.md5 ? createHash('md5') : undefined;
    this.crc64 = wanted.crc64 ? new Crc64() : undefined;
  }

  update(bytes: Buffer): undefined {
    this.md5?.update(bytes);
    this.crc64?.update(bytes);
    return undefined;
  }

  async finish(): Promise<Digests> {
    return { md5: this.md5?.digest(), crc64: this.crc64?.digest() };
  }

  abandon(): void {}
}

/** Pieces of one body handed to the thread and not hashed yet: bounds the memory a body pins. */
const piecesInFlightMax = 4;

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
    const body = new ThreadDigester(id, (request) => this.worker.postMessage(request), forget);
    if (this.bodies.size === 0) this.worker.ref();
    this.bodies.set(id, body);
    this.worker.postMessage({ kind: 'start', id, ...wanted } satisfies DigestRequest);
    return body;
  }
}

class ThreadDigester implements Digester {
  private inFlight = 0;
  private resume: { resolve(): void; reject(error: Error): void } | undefined;
  private finished: { resolve(digests: Digests): void; reject(error: Error): void } | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly id: number,
    private readonly send: (request: DigestRequest) => void,
    private readonly forget: () => void,
  ) {}

  update(bytes: Buffer): Promise<void> | undefined {
    assert(bytes.buffer instanceof SharedArrayBuffer, 'the digest thread reads shared memory');
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.send({ kind: 'update', id: this.id, bytes });
    if (++this.inFlight < piecesInFlightMax) return undefined;
    return new Promise((resolve, reject) => (this.resume = { resolve, reject }));
  }

  finish(): Promise<Digests> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.send({ kind: 'finish', id: this.id });
    return new Promise((resolve, reject) => (this.finished = { resolve, reject }));
  }

  abandon(): void {
    this.forget();
    if (this.failure === undefined) this.send({ kind: 'abandon', id: this.id });
  }

  answered(answer: DigestAnswer): void {
    if (answer.kind === 'updated') {
      this.inFlight--;
      const resume = this.resume;
      this.resume = undefined;
      resume?.resolve();
      return;
    }
    this.forget();
    const buffer = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes));
    this.finished?.resolve({ md5: buffer(answer.md5), crc64: buffer(answer.crc64) });
  }

  failed(error: Error): void {
    this.failure = error;
    this.resume?.reject(error);
    this.finished?.reject(error);
  }
}
