// The tidy check (scripts/tidy.mjs) against a fixture tree that breaks each of its rules once, and a
// tree that keeps them; then --fix: formatting and comment reflow, and a second run that changes
// nothing. Violating text is assembled at run time so that this file itself passes the check.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Violation {
  path: string;
  line: number;
  rule: string;
  message: string;
}
interface Tidy {
  check(root: string): { violations: Violation[]; known: Violation[] };
  fix(root: string): Promise<string[]>;
}

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const tidy = (await import(new URL('../../../scripts/tidy.mjs', import.meta.url).href)) as Tidy;

const issueText = ['iss', 'ue 12'].join('');
const privateName = ['err', 'ors.md'].join('');
const section = '\u00a7';

function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tidy-'));
  const base: Record<string, string> = {
    'README.md': '# Project\n\n## Quick start\n\nSee [the layers](docs/architecture.md#layout).\n',
    'docs/architecture.md': '# Architecture\n\n## Layout\n',
    'docs/protocol-notes.md':
      '# Notes\n\n| page | cited for |\n| --- | --- |\n| `insert-entity` | inserts |\n| `insert-or-replace-entity` | upserts |\n',
  };
  for (const [path, text] of Object.entries({ ...base, ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  cpSync(join(repoRoot, '.prettierrc'), join(root, '.prettierrc'));
  return root;
}

function lines(count: number, body: (i: number) => string): string {
  return Array.from({ length: count }, (_, i) => body(i)).join('\n');
}

/** A function declaration spanning exactly `total` lines. */
function functionOf(name: string, total: number): string {
  return `export function ${name}(): number {\n  let n = 0;\n${lines(total - 4, () => '  n++;')}\n  return n;\n}\n`;
}

function rulesAt(root: string): string[] {
  return tidy
    .check(root)
    .violations.map((v) => `${v.path}:${v.line} ${v.rule}`)
    .sort();
}

describe('tidy check', () => {
  test('a tree that keeps every rule passes', () => {
    const root = fixture({
      'src/domain/good.ts':
        `// Cites docs/architecture.md#layout, README "Quick start" and (Azure REST: insert-entity, unverified).\n` +
        `export const title = '${'a'.repeat(118)}';\n` +
        functionOf('seventy', 70),
      'src/http/front.ts': "import { title } from '../domain/good.js';\nexport const t = title;\n",
      'src/queue/service.ts': "import { t } from '../http/front.js';\nexport const q = t;\n",
      'tests/suite.test.ts':
        "import { describe, test } from 'node:test';\n" +
        `describe('a long suite', () => {\n${lines(80, (i) => `  test('t${i}', () => {});`)}\n});\n`,
    });
    try {
      assert.deepEqual(rulesAt(root), []);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  test('each rule finds its violation, at its line', () => {
    const root = fixture({
      'src/domain/long-line.ts': `export const a = 1;\nexport const b = [${'1, '.repeat(45)}1];\n`,
      'src/domain/long-function.ts': functionOf('seventyOne', 71),
      'src/domain/cites.ts':
        `// docs/missing.md\n// docs/architecture.md#no-such-section\n// README "No such section"\n` +
        `// (Azure REST: not-listed-page)\n// ${issueText}\n// ${privateName}\n// ${section}4.1\nexport {};\n`,
      'src/http/front.ts': 'export const t = 1;\n',
      'explorer/src/page.ts': "import { t } from '../../src/http/front.js';\nexport const p = t;\n",
      'docs/guide.md': 'See [nothing](nothing.md) and [the layout](architecture.md#layout).\n',
    });
    try {
      assert.deepEqual(rulesAt(root), [
        'docs/guide.md:1 citation',
        'explorer/src/page.ts:1 import-direction',
        'src/domain/cites.ts:1 citation',
        'src/domain/cites.ts:2 citation',
        'src/domain/cites.ts:3 citation',
        'src/domain/cites.ts:4 citation',
        'src/domain/cites.ts:5 issue-number',
        'src/domain/cites.ts:6 private-citation',
        'src/domain/cites.ts:7 private-citation',
        'src/domain/long-function.ts:1 function-length',
        'src/domain/long-line.ts:2 line-length',
      ]);
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  test('a cited src/ or tests/ path must exist, and a bare Markdown name must be in some folder', () => {
    const root = fixture({
      'src/table/query/plan.ts': 'export const plan = 1;\n',
      'tests/system/query.test.ts': 'export {};\n',
      'packages/kit/src/index.ts': 'export {};\n',
      'packages/kit/README.md': 'Start at `src/index.ts`.\n',
      'docs/map.md':
        'The planner is `src/table/query/plan.ts` (compiled: src/table/query/plan.js), tested in `tests/system/`\n' +
        'and `tests/system/query*.test.ts`; the layers are in architecture.md. Built into dist/src/gone.js.\n' +
        'The planner was `src/query/plan.ts`.\n' +
        'Tests: `tests/system/gone-*.test.ts`.\n',
      'src/table/query/cites.ts':
        '// Kept in step with tests/system/query.test.ts and README.md.\n' +
        '// See src/query/evaluate.ts,\n// and batch-and-transactions.md.\n' +
        "export const text = 'src/not/a/comment.ts';\n",
    });
    try {
      assert.deepEqual(rulesAt(root), [
        'docs/map.md:3 citation',
        'docs/map.md:4 citation',
        'src/table/query/cites.ts:2 citation',
        'src/table/query/cites.ts:3 citation',
      ]);
      const messages = tidy.check(root).violations.map((v) => v.message);
      assert.ok(messages.includes('cites src/query/plan.ts, which does not exist'), messages.join('\n'));
      assert.ok(messages.includes('cites batch-and-transactions.md, which is in no folder of the repository'));
    } finally {
      rmSync(root, { recursive: true });
    }
  });

  test('violations in scripts/tidy-baseline.json are known, not failures', () => {
    const root = fixture({
      'src/domain/long-function.ts': functionOf('seventyOne', 71),
      'scripts/tidy-baseline.json': JSON.stringify({
        known: ['src/domain/long-function.ts function-length seventyOne'],
      }),
    });
    try {
      const { violations, known } = tidy.check(root);
      assert.deepEqual(violations, []);
      assert.deepEqual(
        known.map((v) => v.rule),
        ['function-length'],
      );
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});

describe('tidy --fix', () => {
  test('formats, reflows long comments, and a second run changes nothing', async () => {
    const words = (n: number) => lines(n, (i) => `word${i}`).replaceAll('\n', ' ');
    const source =
      `// ${words(30)}\n` +
      `/** ${words(30)} */\n` +
      `export const value = {a: "text"}; // ${words(20)}\n` +
      `/**\n * ${words(30)}\n */\n` +
      `export function f() {\n  return \`// ${words(3)}\`;\n}\n`;
    const root = fixture({
      'src/domain/messy.ts': source,
      'src/domain/cited.ts': `// Inserts (${['operations', 'md'].join('.')} ${section}5.1, ${section}5.7).\nexport {};\n`,
    });
    try {
      assert.deepEqual(await tidy.fix(root), ['src/domain/cited.ts', 'src/domain/messy.ts']);
      assert.equal(
        readFileSync(join(root, 'src/domain/cited.ts'), 'utf8'),
        '// Inserts (Azure REST: insert-entity, insert-or-replace-entity).\nexport {};\n',
        'a private citation becomes the public pages',
      );
      const fixed = readFileSync(join(root, 'src/domain/messy.ts'), 'utf8');
      assert.deepEqual(rulesAt(root), []);
      assert.match(fixed, /export const value = \{ a: 'text' \};\n/);
      assert.match(fixed, /return `\/\/ word0 word1 word2`;/, 'a comment-like template is left alone');
      assert.equal(fixed.split('word29').length - 1, 3, 'every word of the comments kept');
      assert.equal(fixed.match(/\bword19\b/g)?.length, 4);
      assert.deepEqual(await tidy.fix(root), [], 'idempotent');
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});
