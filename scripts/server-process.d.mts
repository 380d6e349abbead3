// Types of server-process.mjs (see there why it is JavaScript).
import type { ChildProcess } from 'node:child_process';

export declare const ceruleanBin: string;
export declare const repoRoot: string;
export declare const startTimeoutMsDefault: number;
export declare const stopTimeoutMsDefault: number;

export interface ProcessOptions {
  /** Working directory (default: the repository root). */
  cwd?: string;
  /** The whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Give up (SIGKILL) when not ready by then; default startTimeoutMsDefault. */
  startTimeoutMs?: number;
  /** After SIGTERM or SIGKILL, how long to wait for the exit before SIGKILL and an error (stopTimeoutMsDefault). */
  stopTimeoutMs?: number;
  /** Keep only the last this many characters of each stream (default: all). */
  outputBytesMax?: number;
  /** Names the process in error messages (default: the script). */
  name?: string;
}

export interface NodeProcessOptions<Ready> extends ProcessOptions {
  /** The script and its arguments, run by this Node.js. */
  args: string[];
  /** Called with each line of stdout and stderr until it returns something: the process is ready. */
  ready: (line: string) => Ready | undefined;
}

export interface NodeProcess<Ready> {
  /** What `ready` returned. */
  readonly ready: Ready;
  readonly process: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the process printed so far. */
  output(): { stdout: string; stderr: string };
  /** SIGTERM and wait: the exit code (null if a signal ended it); rejects if it had to SIGKILL. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait: no chance to flush anything. */
  kill9(): Promise<void>;
}

export interface CeruleanBanner {
  /** The table endpoint, `http://HOST:PORT/devstoreaccount1`, as printed. */
  readonly url: string;
  /** The Queue service's endpoint, when the banner names one. */
  readonly queueUrl: string | undefined;
  /** The Blob service's endpoint, when the banner names one. */
  readonly blobUrl: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly connectionString: string;
}

export interface CeruleanOptions extends ProcessOptions {
  /** Arguments after `bin/cerulean.js`. */
  args?: string[];
}

export declare function ceruleanBanner(): (line: string) => CeruleanBanner | undefined;
export declare function startCerulean(options: CeruleanOptions): Promise<NodeProcess<CeruleanBanner>>;
export declare function startNodeProcess<Ready>(options: NodeProcessOptions<Ready>): Promise<NodeProcess<Ready>>;
export declare function freeLoopbackPort(): Promise<number>;
