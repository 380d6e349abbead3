// The server as a process: a usage error is one line and a hint; one server per data directory;
// the banner says what is on and what works off the default port; a PostgreSQL database that
// comes up after the server started is waited for with --wait-for-database.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../helpers/cli.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../../helpers/postgres.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const binPath = fileURLToPath(new URL('../../../../bin/cerulean.js', import.meta.url));

describe('the server process', () => {
  test('a usage error is one line and a hint, exit 2', async () => {
    for (const args of [['--throttle', 'fast'], ['--bogus'], ['--port', '70000']]) {
      const result = await runCli(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 2, result.stderr);
      assert.match(lines[0]!, /^cerulean: /);
      assert.equal(lines[1], "Run 'cerulean serve --help' for the options.");
    }
    const throttle = await runCli(['--throttle', 'fast']);
    assert.match(
      throttle.stderr,
      /^cerulean: --throttle must be 'azure' or 'partition=N,account=M,blob=K', not 'fast'\n/,
    );
  });

  test('the help is made from the flag table: every flag with its variable and default', async () => {
    const help = await runCli(['serve', '--help']);
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /^ {2}--queue-port <number> +Queue service port, 0 = any free \(CERULEAN_QUEUE_PORT, default 10001\)$/m,
    );
    assert.match(
      help.stdout,
      /^ {2}--blob-port <number> +Blob service port, 0 = any free \(CERULEAN_BLOB_PORT, default 10000\)$/m,
    );
    assert.match(help.stdout, /^ {2}--wait-for-database <seconds> .*\(CERULEAN_WAIT_FOR_DATABASE, default 0\)$/m);
    assert.match(help.stdout, /^ {2}--no-metrics +.*\(CERULEAN_METRICS=0\)$/m);
  });

  describe('one server per data directory', () => {
    let dir: string;
    let first: RunningServer;
    before(async () => {
      dir = makeTempDir();
      first = await startServer({ location: dir });
    });
    after(async () => {
      await first?.stop();
      removeDir(dir);
    });

    test('a second server on the same --location is refused with one line', async () => {
      const second = await runCli(['--location', dir, '--port', '0', '--queue-port', '0', '--blob-port', '0']);
      assert.equal(second.code, 1, second.stderr);
      assert.equal(
        second.stderr,
        `cannot open the store: ${dir} is in use by another Cerulean server (PID ${first.process.pid}); ` +
          'stop it or choose another --location\n',
      );
    });

    test('once the first stops the directory is free; a lock of a process that is gone is taken over', async () => {
      assert.equal(await first.stop(), 0);
      const gone = spawn(process.execPath, ['-e', '']);
      await once(gone, 'exit');
      writeFileSync(join(dir, 'cerulean.lock'), `${gone.pid}\n`);
      first = await startServer({ location: dir });
    });

    test('a lock naming a live node process that is no server (its PID reused after a reboot) does not block', async () => {
      assert.equal(await first.stop(), 0);
      const unrelated = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        await once(unrelated, 'spawn');
        // As an earlier version wrote it (the PID as text), then as a server killed before it left it.
        writeFileSync(join(dir, 'cerulean.lock'), `${unrelated.pid}\n`);
        first = await startServer({ location: dir });
        await first.kill9();
        const lock = new Database(join(dir, 'cerulean.lock'));
        lock.pragma(`user_version = ${unrelated.pid}`);
        lock.close();
        first = await startServer({ location: dir });
      } finally {
        unrelated.kill('SIGKILL');
      }
    });

    test('after kill -9 of the holder the next server starts; the one after it is refused', async () => {
      await first.kill9();
      first = await startServer({ location: dir });
      const second = await runCli(['--location', dir, '--port', '0', '--queue-port', '0', '--blob-port', '0']);
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`\\(PID ${first.process.pid}\\); stop it or choose another --location\n$`),
      );
    });
  });

  test('the banner says what is on, and what works off the default port', async () => {
    const dir = makeTempDir();
    const faults = join(dir, 'faults.json');
    writeFileSync(faults, JSON.stringify({ rules: [] }));
    const server = await startServer({
      inMemory: true,
      args: ['--throttle', 'azure', '--faults', faults, '--no-metrics'],
    });
    try {
      // The helper returns at the connection string; the rest of the banner follows it.
      while (!server.output().stdout.includes('\nData: ')) await new Promise((resolve) => setTimeout(resolve, 20));
      const { stdout } = server.output();
      assert.match(
        stdout,
        /^Features: metrics off, throttling on \(2000\/s per partition, 500\/s per blob, 20000\/s per account\), /m,
      );
      assert.match(
        stdout,
        new RegExp(`fault rules from ${faults.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, explorer on$`, 'm'),
      );
      assert.match(
        stdout,
        /^Note: not port 10002, so UseDevelopmentStorage=true misses this server: use the connection string above\.$/m,
      );
      assert.match(stdout, /^Note: over HTTP, .*allowInsecureConnection: true\.$/m);
    } finally {
      await server.stop();
      removeDir(dir);
    }
  });

  test(
    '--wait-for-database waits for a database that comes up after the server started',
    { skip: postgresUnavailable() },
    async () => {
      const database = new URL(await createDatabase());
      // The server is pointed at a port where nothing listens yet; a forwarder to the real database opens there later.
      const placeholder = net.createServer();
      await new Promise<void>((resolve) => placeholder.listen(0, '127.0.0.1', resolve));
      const port = (placeholder.address() as net.AddressInfo).port;
      await new Promise<void>((resolve) => placeholder.close(() => resolve()));
      const target = { host: database.hostname, port: Number(database.port || 5432) };
      const url = new URL(database.href);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      const child = spawn(
        process.execPath,
        [
          binPath,
          '--database',
          url.href,
          '--wait-for-database',
          '60',
          '--port',
          '0',
          '--queue-port',
          '0',
          '--blob-port',
          '0',
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const forwarder = net.createServer((socket) => socket.pipe(net.connect(target)).pipe(socket));
      try {
        const waiting = createInterface({ input: child.stderr! });
        const [line] = (await once(waiting, 'line')) as [string];
        assert.match(line, /waiting for the database \(\d+ s left\): .*ECONNREFUSED/);
        await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
        const output = createInterface({ input: child.stdout! });
        const [banner] = (await once(output, 'line')) as [string];
        assert.match(banner, /^Cerulean listening on http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
      } finally {
        child.kill('SIGTERM');
        await once(child, 'exit');
        forwarder.close();
        await dropDatabase(database.href);
      }
    },
  );
});
