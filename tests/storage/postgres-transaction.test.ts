// PostgresConnection.transaction on a real database: BEGIN goes in the round trip of the body's
// first statement (begin-with.ts), and that statement, and every one after, runs in the
// transaction. Skipped, loudly, without a PostgreSQL: tests/helpers/postgres.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { commitWith } from '../../src/storage/postgres/commit-with.js';
import { PostgresConnection } from '../../src/storage/postgres/connection.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../helpers/postgres.js';

const unavailable = postgresUnavailable();

/** A statement that assigns the transaction an id and answers it. */
const xactId = { name: 'test_xact_id', text: 'SELECT pg_current_xact_id()::text AS id WHERE $1::integer = 1', values: [1] };

interface Observed {
  readonly client: pg.PoolClient;
  readonly ids: string[];
  /** ReadyForQuery messages (one per round trip) from checkout to release: BEGIN and COMMIT too. */
  readonly roundTrips: number;
}

/** A transaction of two statements, kept or rolled back, and what it saw. */
async function twoStatements(connection: PostgresConnection, keep: boolean): Promise<Observed> {
  let roundTrips = 0;
  const count = () => roundTrips++;
  let protocol: NodeJS.EventEmitter | undefined;
  const acquired = (client: pg.PoolClient) => {
    protocol = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    protocol.on('readyForQuery', count);
  };
  connection.pool.once('acquire', acquired);
  try {
    const seen = await connection.transaction(
      async (client) => {
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) ids.push((await client.query<{ id: string }>(xactId)).rows[0]!.id);
        return { client, ids };
      },
      () => keep,
      undefined as unknown as { client: pg.PoolClient; ids: string[] },
    );
    return { ...seen, roundTrips };
  } finally {
    protocol?.off('readyForQuery', count);
  }
}

describe('PostgreSQL transactions', { skip: unavailable }, () => {
  let url: string;
  let connection: PostgresConnection;
  before(async () => {
    url = await createDatabase();
    connection = PostgresConnection.create(url);
  });
  after(async () => {
    await connection?.close();
    if (url !== undefined) await dropDatabase(url);
  });

  test('BEGIN goes with the first statement once the connection has it prepared', async () => {
    // The first use prepares the statement on the connection: BEGIN goes alone, before the body.
    const first = await twoStatements(connection, true);
    assert.equal(first.ids[0], first.ids[1], 'both statements in one transaction');
    assert.equal(first.roundTrips, 4, 'BEGIN, the two statements, COMMIT');
    const second = await twoStatements(connection, true);
    assert.equal(second.client, first.client, 'the pool hands the one idle connection out again');
    assert.equal(second.ids[0], second.ids[1], 'both statements in one transaction');
    assert.notEqual(second.ids[0], first.ids[0]);
    assert.equal(second.roundTrips, 3, 'BEGIN with the first statement, the second, COMMIT');
  });

  test('COMMIT goes with the last statement; a failing one commits nothing', async () => {
    await connection.query('write', { text: 'CREATE TABLE IF NOT EXISTS c (n integer)', values: [] });
    const insert = (n: number) => ({ name: 'test_insert_c', text: 'INSERT INTO c VALUES ($1)', values: [n] });
    // The last statement fails when $1 is 0, after its insert: the whole transaction goes.
    const checked = (n: number) => ({
      name: 'test_checked_c',
      text: 'WITH i AS (INSERT INTO c VALUES ($1) RETURNING n) SELECT 1 / (SELECT n FROM i) AS ok',
      values: [n],
    });
    const transact = (last: number) =>
      connection.transaction(
        async (client) => {
          await client.query(insert(1));
          await commitWith(client, checked(last));
          return true;
        },
        () => true,
        false,
      );
    await transact(2); // prepares both statements on the connection
    let roundTrips = 0;
    const count = () => roundTrips++;
    let protocol: NodeJS.EventEmitter | undefined;
    connection.pool.once('acquire', (client: pg.PoolClient) => {
      protocol = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
      protocol.on('readyForQuery', count);
    });
    await transact(3);
    protocol?.off('readyForQuery', count);
    assert.equal(roundTrips, 2, 'BEGIN with the first statement, COMMIT with the last');
    // The database's error (a division by zero) as the Azure error a failed write is.
    await assert.rejects(transact(0), /not valid/);
    const { rows } = await connection.query<{ n: number }>('read', {
      text: 'SELECT n FROM c ORDER BY n',
      values: [],
    });
    assert.deepEqual(
      rows.map((row) => row.n),
      [1, 1, 2, 3],
      'the two kept transactions, nothing of the failed one',
    );
  });

  test('a transaction rolled back leaves nothing, and the connection serves the next one', async () => {
    await connection.query('write', { text: 'CREATE TABLE IF NOT EXISTS t (n integer)', values: [] });
    const insert = { name: 'test_insert', text: 'INSERT INTO t VALUES ($1)', values: [1] };
    for (let round = 0; round < 3; round++) {
      const keep = round === 1;
      await connection.transaction(
        async (client) => (await client.query(insert)).rowCount,
        () => keep,
        0,
      );
    }
    const { rows } = await connection.query<{ n: number }>('read', { text: 'SELECT count(*)::integer AS n FROM t', values: [] });
    assert.equal(rows[0]!.n, 1, 'only the kept insert is there');
    const after = await twoStatements(connection, false);
    assert.equal(after.ids[0], after.ids[1]);
  });
});
