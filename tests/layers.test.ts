// Imports point down the layers of docs/architecture.md: a file may import its own folder and the
// layers below it, never a layer above, and never across folders of one strict layer (the Table
// service's operations do not import its wire format). The engines are private to storage/ and
// to the composition that opens them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const srcDir = fileURLToPath(new URL('../../src/', import.meta.url));
const repoDir = fileURLToPath(new URL('../../', import.meta.url));

/** Bottom first. A path belongs to the layer of its longest matching prefix (relative to src/). */
const layers: readonly { readonly name: string; readonly prefixes: readonly string[]; readonly strict?: true }[] = [
  { name: 'domain', prefixes: ['domain/', 'errors.ts', 'limits.ts'] },
  { name: 'storage', prefixes: ['storage/'] },
  // The wire formats every service shares (XML, service-properties and ACL bodies); the front door writes XML errors.
  { name: 'wire', prefixes: ['wire/'] },
  { name: 'front door', prefixes: ['http/'] },
  {
    name: 'the Table service',
    prefixes: ['table/query/', 'table/wire/', 'table/service/'],
    strict: true,
  },
  // A service's own package (its wire format, operations and route table), registered by main.
  { name: 'services', prefixes: ['queue/', 'blob/', 'table/', 'dfs/'], strict: true },
  { name: 'observe', prefixes: ['observe/'] },
  {
    name: 'composition and tools',
    prefixes: ['banner.ts', 'compose.ts', 'config.ts', 'location-lock.ts', 'azurite-flags.ts', 'main.ts', 'shutdown.ts', 'cli/'],
  },
];

/** The imports across a strict layer that docs/architecture.md allows: the operations use the query compiler. */
const allowedAcross: readonly (readonly [string, string])[] = [['table/service/', 'table/query/']];

/** The services: none imports another, and the front door (below them) imports none. */
const services = ['table/', 'queue/', 'blob/', 'dfs/'];

/** Engines: only storage/ itself and the composition open them. */
const engines = ['storage/sqlite/', 'storage/postgres/'];
const engineUsers = ['storage/', 'compose.ts'];

function placeOf(path: string): { layer: number; prefix: string } {
  let found: { layer: number; prefix: string } | undefined;
  layers.forEach(({ prefixes }, layer) => {
    for (const prefix of prefixes) {
      if (path.startsWith(prefix) && (found === undefined || prefix.length > found.prefix.length))
        found = { layer, prefix };
    }
  });
  assert.ok(
    found !== undefined,
    `src/${path} is in no layer of tests/layers.test.ts: add its folder there and to docs/architecture.md`,
  );
  return found;
}

/** The .ts files under `dir`, relative to `base` (src/ unless told). */
function* sourceFiles(dir: string, base = srcDir): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path, base);
    else if (entry.name.endsWith('.ts')) yield relative(base, path).split('\\').join('/');
  }
}

/** Relative module specifiers of static imports, re-exports and dynamic imports, as src/ paths. */
function importsOf(file: string, read: (file: string) => string): string[] {
  const text = read(file);
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.map((specifier) =>
    normalize(join(dirname(file), specifier))
      .split('\\')
      .join('/')
      .replace(/\.js$/, '.ts'),
  );
}

/** Every import that runs up or across the layers, as `from → to (why)`. */
function layerViolations(files: Iterable<string>, read: (file: string) => string): string[] {
  const violations: string[] = [];
  for (const file of files) {
    const from = placeOf(file);
    for (const target of importsOf(file, read)) {
      const to = placeOf(target);
      const line = `src/${file} → src/${target}`;
      const fromService = services.find((s) => file.startsWith(s));
      const toService = services.find((s) => target.startsWith(s));
      if (to.layer > from.layer)
        violations.push(`${line} (${layers[from.layer]!.name} imports ${layers[to.layer]!.name})`);
      else if (fromService !== undefined && toService !== undefined && fromService !== toService)
        violations.push(`${line} (a service imports another service)`);
      else if (to.layer === from.layer && layers[to.layer]!.strict && to.prefix !== from.prefix && !allowed(from, to)) {
        violations.push(`${line} (across ${layers[to.layer]!.name})`);
      }
      if (engines.some((e) => target.startsWith(e)) && !engineUsers.some((user) => file.startsWith(user))) {
        violations.push(`${line} (an engine is private to storage/ and the composition)`);
      }
    }
  }
  return violations;
}

function allowed(from: { prefix: string }, to: { prefix: string }): boolean {
  return allowedAcross.some(([importer, imported]) => from.prefix === importer && to.prefix === imported);
}

test('every import in src/ points down the layers of docs/architecture.md', () => {
  assert.deepEqual(
    layerViolations(sourceFiles(srcDir), (file) => readFileSync(join(srcDir, file), 'utf8')),
    [],
  );
});

/** Imports from `folder` (relative to the repository) into `other`: bench/ and tests/ share only src/ and scripts/. */
function importsInto(folder: string, other: string): string[] {
  const files = sourceFiles(join(repoDir, folder), repoDir);
  const read = (file: string) => readFileSync(join(repoDir, file), 'utf8');
  return [...files].flatMap((file) =>
    importsOf(file, read)
      .filter((target) => target.startsWith(other))
      .map((target) => `${file} → ${target}`),
  );
}

test('the benchmark, a tool, and the tests import nothing of each other (shared code lives in scripts/)', () => {
  assert.deepEqual(importsInto('bench/', 'tests/'), []);
  assert.deepEqual(importsInto('tests/', 'bench/'), []);
});

test('the check reports imports up, across and into an engine, and lets the allowed ones through', () => {
  const files: Record<string, string> = {
    'domain/a.ts': "import { x } from '../http/server.js';\nimport type { E } from '../errors.js';",
    'table/service/b.ts': "import type { C } from '../wire/odata.js';\nimport { q } from '../query/index.js';",
    'http/c.ts': "export { s } from '../storage/sqlite/sqlite-store.js';\nconst m = await import('./respond.js');",
    'observe/d.ts': "import type { R } from '../http/hooks.js';",
    'queue/e.ts': "import { x } from '../table/wire/odata.js';\nimport { w } from '../wire/xml.js';",
    'http/f.ts': "import { p } from '../table/wire/odata.js';\nimport { w } from '../wire/xml.js';",
    'blob/g.ts': "import { q } from '../queue/operations.js';",
  };
  assert.deepEqual(
    layerViolations(Object.keys(files), (file) => files[file]!),
    [
      'src/domain/a.ts → src/http/server.ts (domain imports front door)',
      'src/table/service/b.ts → src/table/wire/odata.ts (across the Table service)',
      'src/http/c.ts → src/storage/sqlite/sqlite-store.ts (an engine is private to storage/ and the composition)',
      'src/queue/e.ts → src/table/wire/odata.ts (a service imports another service)',
      'src/http/f.ts → src/table/wire/odata.ts (front door imports the Table service)',
      'src/blob/g.ts → src/queue/operations.ts (a service imports another service)',
    ],
  );
});
