// `cerulean containers` and `cerulean blobs ls | upload | download | sync | rm`, run as typed against a
// real server on each engine: a folder of 1,000 small files goes up and comes back byte for byte;
// running again transfers nothing; sync sends only what changed; progress is a live line on a
// terminal (a pseudo-terminal through script(1)) and no terminal control characters otherwise.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describeRun, runCli, startCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { makeTempDir, removeDir, serverEngines, startServer } from '../helpers/server.js';
import { localPathOf } from '../../src/cli/blob-files.js';
import { patternBytes } from './blob-endpoints.js';

const fileCount = 1000;
const binPath = fileURLToPath(new URL('../../../bin/cerulean.js', import.meta.url));

/** Every file under `folder`, by its path relative to it, with its bytes. */
function readTree(folder: string): Map<string, string> {
  const tree = new Map<string, string>();
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    tree.set(relative(folder, file), readFileSync(file).toString('base64'));
  }
  return tree;
}

describe('cerulean blobs', () => {
  let dir: string;
  let source: string;

  before(() => {
    dir = makeTempDir('cerulean-blob-commands-');
    source = join(dir, 'site');
    for (let i = 0; i < fileCount; i++) {
      const folder = join(source, `d${i % 10}`, i % 3 === 0 ? 'deep' : '');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `f${i}.bin`), patternBytes(40 + (i % 97), `file ${i}`));
    }
  });
  after(() => {
    if (dir) removeDir(dir);
  });

  for (const { label, options } of serverEngines) {
    test(`a folder of ${fileCount} files up and back, again, synced and removed (${label})`, async () => {
      const server = await startServer(options);
      const c = ['-c', server.connectionString];
      const out = join(dir, `out-${label}`);
      try {
        const up = await runCli(['blobs', 'upload', source, 'web/v1', ...c]);
        assert.equal(up.code, 0, describeRun(up));
        // Every Cerulean account has a hierarchical namespace: the upload makes a directory for v1, each
        // d* and each d*/deep (docs/cli.md), listed beside the prefixes.
        assert.match(
          up.stderr,
          /^upload: 1,000 files, [\d,]+ bytes transferred, 0 identical skipped \(.*\), 21 directories made$/m,
        );
        assert.doesNotMatch(up.stderr, /[\r\x1b]/); // not a terminal: no redrawn line

        const ls = await runCli(['blobs', 'ls', 'web', '--prefix', 'v1/', '--delimiter', '/', ...c]);
        assert.equal(ls.code, 0, describeRun(ls));
        assert.deepEqual(
          ls.stdout
            .trim()
            .split('\n')
            .map((line) => line.trim().split(/\s+/).at(-1)),
          [...Array.from({ length: 10 }, (_, i) => `v1/d${i}/`), ...Array.from({ length: 10 }, (_, i) => `v1/d${i}`)],
        );
        const flat = await runCli(['blobs', 'ls', 'web', '--json', ...c]);
        assert.equal(flat.stdout.trim().split('\n').length, fileCount + 21);
        const containers = await runCli(['containers', ...c]);
        assert.match(containers.stdout, /^web {2}\d{4}-/m);

        const down = await runCli(['blobs', 'download', 'web/v1/', out, ...c]);
        assert.equal(down.code, 0, describeRun(down));
        assert.match(down.stderr, /^download: 1,000 files, [\d,]+ bytes transferred, 0 identical skipped/m);
        assert.deepEqual(readTree(out), readTree(source));

        const again = await runCli(['blobs', 'upload', source, 'web/v1', ...c]);
        assert.match(again.stderr, /^upload: 0 files, 0 bytes transferred, 1,000 identical skipped/m);
        const downAgain = await runCli(['blobs', 'download', 'web/v1/', out, ...c]);
        assert.match(downAgain.stderr, /^download: 0 files, 0 bytes transferred, 1,000 identical skipped/m);

        writeFileSync(join(source, 'd1', 'f1.bin'), 'changed');
        writeFileSync(join(source, 'd2', 'new.txt'), 'new');
        rmSync(join(source, 'd3', 'deep', 'f3.bin'));
        try {
          const sync = await runCli(['blobs', 'sync', source, 'web/v1', '--delete', ...c]);
          assert.equal(sync.code, 0, describeRun(sync));
          assert.match(sync.stderr, /^sync: 2 files, 10 bytes transferred, 998 identical skipped, 1 blobs deleted/m);
          const down2 = await runCli(['blobs', 'download', 'web/v1/', out, ...c]);
          assert.match(down2.stderr, /^download: 2 files, 10 bytes transferred, 998 identical skipped/m);
          rmSync(join(out, 'd3', 'deep', 'f3.bin'));
          assert.deepEqual(readTree(out), readTree(source));
        } finally {
          writeFileSync(join(source, 'd1', 'f1.bin'), patternBytes(40 + 1, 'file 1'));
          rmSync(join(source, 'd2', 'new.txt'));
          writeFileSync(join(source, 'd3', 'deep', 'f3.bin'), patternBytes(40 + 3, 'file 3'));
        }

        const rm = await runCli(['blobs', 'rm', 'web', '--prefix', 'v1/d0/', ...c]);
        assert.equal(rm.code, 0, describeRun(rm));
        assert.equal(rm.stdout, 'rm web: 101 blobs deleted\n'); // and the directory d0/deep
        const rest = await runCli(['blobs', 'ls', 'web', '--prefix', 'v1/d0/', ...c]);
        assert.equal(rest.stdout, '');
      } finally {
        await server.stop();
      }
    });
  }

  test('Ctrl-C stops an upload and a copy; run again, they finish, skipping what is there', async () => {
    const [server, other] = await Promise.all([startServer({ inMemory: true }), startServer({ inMemory: true })]);
    const c = ['-c', server.connectionString];
    const faults = (port: number) => async () => {
      const response = await send(port, { method: 'GET', path: '/_faults' });
      return (response.json() as { rules: { matched: number }[] }).rules[0]?.matched ?? 0;
    };
    const slowPutBlob = async (connectionString: string) => {
      const rules = JSON.stringify({ rules: [{ kind: 'latency', every: 1, latencyMs: 200, operations: ['PutBlob'] }] });
      const set = await runCli(['faults', 'set', rules, '-c', connectionString]);
      assert.equal(set.code, 0, describeRun(set));
    };
    const interruptAfter = async (args: string[], matched: () => Promise<number>) => {
      const run = startCli(args);
      while ((await matched()) < 20) await new Promise((resolve) => setTimeout(resolve, 50));
      run.signal('SIGINT');
      return run.result;
    };
    try {
      await slowPutBlob(server.connectionString);
      const upload = ['blobs', 'upload', source, 'resume', ...c];
      const stopped = await interruptAfter(upload, faults(server.port));
      assert.equal(stopped.code, 130, describeRun(stopped));
      assert.match(
        stopped.stderr,
        /^cerulean blobs: interrupted: upload: [1-9][\d,]* files, .*run the same command to finish$/m,
      );
      assert.equal((await runCli(['faults', 'clear', ...c])).code, 0);
      const finished = await runCli(upload);
      assert.equal(finished.code, 0, describeRun(finished));
      const [, sent, skipped] = /upload: ([\d,]+) files, [\d,]+ bytes transferred, ([\d,]+) identical skipped/.exec(
        finished.stderr,
      )!;
      assert.ok(Number(skipped!.replace(',', '')) > 0, finished.stderr);
      assert.equal(Number(sent!.replace(',', '')) + Number(skipped!.replace(',', '')), fileCount);

      await slowPutBlob(other.connectionString);
      const copy = ['copy', server.connectionString, other.connectionString, '--only', 'blobs'];
      const copyStopped = await interruptAfter(copy, faults(other.port));
      assert.equal(copyStopped.code, 130, describeRun(copyStopped));
      assert.match(copyStopped.stderr, /interrupted: 0 of 1 container\(s\) copied, resume in part; run the copy again/);
      assert.equal((await runCli(['faults', 'clear', '-c', other.connectionString])).code, 0);
      const copied = await runCli([...copy, '--verify']);
      assert.equal(copied.code, 0, describeRun(copied));
      assert.match(
        copied.stdout,
        /^resume: [\d,]+ blobs, [\d,]+ bytes copied, [1-9][\d,]* identical already there, sizes and checksums match$/m,
      );
      const out = join(dir, 'resumed-out');
      assert.equal((await runCli(['blobs', 'download', 'resume', out, '-c', other.connectionString])).code, 0);
      assert.deepEqual(readTree(out), readTree(source));
    } finally {
      await Promise.all([server.stop(), other.stop()]);
    }
  });

  test('on a terminal, upload shows a live line: count, bytes, rate, time left', async (t) => {
    if (!existsSync('/usr/bin/script')) return t.skip('script(1) is not installed');
    const server = await startServer({ inMemory: true });
    try {
      const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
      const command = [process.execPath, binPath, 'blobs', 'upload', source, 'tty', '-c', server.connectionString];
      const { stdout } = await promisify(execFile)(
        '/usr/bin/script',
        ['-qec', command.map(quote).join(' '), '/dev/null'],
        {
          env: { ...process.env, AZURE_STORAGE_CONNECTION_STRING: '' },
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      assert.match(stdout, /\rupload: [\d,]+\/1,000 files, [\d.]+ (B|KiB|MiB), [\d.]+ (B|KiB|MiB)\/s/);
      assert.match(stdout, /upload: 1,000 files, [\d,]+ bytes transferred/);
    } finally {
      await server.stop();
    }
  });

  test('unknown subcommands are usage errors; a blob name never leads outside the folder', async () => {
    const bad = await runCli(['blobs', 'bogus']);
    assert.equal(bad.code, 2, describeRun(bad));
    assert.match(bad.stderr, /unknown subcommand 'bogus': ls, upload, download, sync or rm/);
    // The SDK cannot even name such a blob, but a service may list one: the file name is checked.
    assert.throws(() => localPathOf(dir, '', '../../outside.txt'), /its name leads outside/);
    assert.throws(() => localPathOf(dir, 'a/', 'a/'), /its name leads outside/);
    assert.equal(localPathOf(dir, 'web/v1', 'web/v1/d1/f.bin'), join(dir, 'v1', 'd1', 'f.bin'));
    assert.equal(localPathOf(dir, 'web/', 'web/d1/f.bin'), join(dir, 'd1', 'f.bin'));
  });
});
