// How a service's store conformance suite (tests/storage/queue-conformance/,
// tests/storage/blob-conformance/) registers its cases for one engine: a group of cases per fresh
// store, each case run against the group's context, and skips that must name a case and give a
// written reason.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

export interface ConformanceCase<Context> {
  /** Unique across the suite: the key of a skip entry. */
  readonly name: string;
  run(context: Context): Promise<void>;
}

export interface ConformanceGroup<Context> {
  readonly name: string;
  readonly cases: readonly ConformanceCase<Context>[];
}

export function runConformanceGroups<Subject extends { close(): Promise<void> }, Context>(
  title: string,
  groups: readonly ConformanceGroup<Context>[],
  factory: () => Promise<Subject>,
  contextOf: (subject: Subject) => Context,
  skips: Readonly<Record<string, string>> = {},
): void {
  const skip = new Map(Object.entries(skips));
  const names = new Set(groups.flatMap((group) => group.cases.map((each) => each.name)));
  assert.equal(names.size, groups.flatMap((group) => group.cases).length, 'case names are unique');
  for (const [name, reason] of skip) {
    assert.ok(names.has(name), `${title}: the skip list names no case "${name}"`);
    assert.ok(reason.trim().length > 0, `${title}: the skip of "${name}" needs a written reason`);
  }
  describe(title, () => {
    for (const group of groups) {
      describe(group.name, () => {
        let subject: Subject | undefined;
        let context: Context | undefined;
        before(async () => {
          subject = await factory();
          context = contextOf(subject);
        });
        after(() => subject?.close());
        for (const each of group.cases) {
          const reason = skip.get(each.name);
          test(each.name, reason === undefined ? {} : { skip: reason }, () => each.run(context!));
        }
      });
    }
  });
}
