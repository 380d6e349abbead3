// libpq multi-host URLs (hosts.ts): every host, its port, and target_session_attrs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeDatabaseUrl, parseDatabaseUrl } from '../../src/storage/postgres/hosts.js';

test('several hosts with ports, user, password, database and target_session_attrs', () => {
  const target = parseDatabaseUrl(
    'postgres://user:pw@h1:5432,h2:5433/db?target_session_attrs=read-write&sslmode=disable',
  );
  assert.deepEqual(target.hosts, [
    { host: 'h1', port: 5432 },
    { host: 'h2', port: 5433 },
  ]);
  assert.equal(target.sessionAttrs, 'read-write');
  assert.equal(target.urlFor(target.hosts[1]!), 'postgres://user:pw@h2:5433/db?sslmode=disable');
});

test('one host, default port, IPv6, postgresql:// and primary as read-write', () => {
  const one = parseDatabaseUrl('postgresql://u@db/x');
  assert.deepEqual(one.hosts, [{ host: 'db', port: 5432 }]);
  assert.equal(one.sessionAttrs, 'any');
  const v6 = parseDatabaseUrl('postgres://u@[::1]:6000,[fe80::2]/x?target_session_attrs=primary');
  assert.deepEqual(v6.hosts, [
    { host: '::1', port: 6000 },
    { host: 'fe80::2', port: 5432 },
  ]);
  assert.equal(v6.sessionAttrs, 'read-write');
  assert.equal(v6.urlFor(v6.hosts[0]!), 'postgres://u@[::1]:6000/x');
});

test('errors a user can act on', () => {
  assert.throws(() => parseDatabaseUrl('mysql://h/db'), /starts with postgres:\/\//);
  assert.throws(() => parseDatabaseUrl('postgres://h:99999/db'), /bad port/);
  assert.throws(() => parseDatabaseUrl('postgres://h/db?target_session_attrs=sometimes'), /not supported/);
});

test('described without the password, every host named', () => {
  const text = describeDatabaseUrl('postgres://u:secret@h1:5432,h2:5432/db?target_session_attrs=read-write');
  assert.equal(text, 'postgres://u:***@h1:5432,h2:5432/db (read-write)');
});
