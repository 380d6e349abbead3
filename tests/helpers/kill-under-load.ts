// A crash test's load: writers run until the server gets SIGKILL, a random moment after each had
// what `waiting` waits for (its first acknowledgements); a writer's failure before the kill fails
// the test, failures the kill causes do not.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { RunningServer } from './server.js';

export interface KillPlan {
  /** Each writer runs until `stop()` answers true. */
  readonly writers: readonly ((stop: () => boolean) => Promise<void>)[];
  /** True while some writer still waits for the acknowledgements the kill must come after. */
  readonly waiting: () => boolean;
  /** The kill comes at a random moment within this once nothing is waiting. */
  readonly killDelayMaxMs: number;
  /** How long the writers may take to get there. */
  readonly firstAcksWithinMs: number;
}

export async function loadUntilKilled(server: RunningServer, plan: KillPlan): Promise<void> {
  let killing = false;
  const stop = () => killing;
  const errors: string[] = [];
  const guard = (work: Promise<void>) =>
    work.catch((error: unknown) => {
      if (!killing) errors.push(error instanceof Error ? error.message : String(error));
    });
  const running = plan.writers.map((writer) => guard(writer(stop)));
  const deadline = Date.now() + plan.firstAcksWithinMs;
  while (plan.waiting() && errors.length === 0 && Date.now() < deadline) await delay(20);
  await delay(Math.floor(Math.random() * plan.killDelayMaxMs));
  killing = true;
  await server.kill9();
  await Promise.all(running);
  assert.deepEqual(errors, [], 'no writer failed before the kill');
  assert.ok(!plan.waiting(), 'every writer had an acknowledgement before the kill');
}
