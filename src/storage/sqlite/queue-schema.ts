// The Queue service's tables in the SQLite database, beside the Table service's (schema.ts).
//
// - queues: one row per (account, name) with a surrogate id that keeps message keys short; a
//   queue deleted and created again gets a new id. Metadata is a JSON array of [name, value] pairs
//   (order as given); acl is the service's encoded access policies, null when none are set.
// - messages: a rowid table whose rowid `seq` is the insertion order (a new message's seq is
//   larger than every present one's). `expires_ms` is null for a message that never expires.
//   By id: delete and update. By visibility (queue_id, visible_ms, seq): get and peek start at the
//   earliest visible message and walk forward, so invisible messages are never read. By expiry:
//   purgeExpired reads only what has expired.
export const queueSchema = `
CREATE TABLE IF NOT EXISTS queues (
  account TEXT NOT NULL,
  name TEXT NOT NULL,
  id INTEGER NOT NULL UNIQUE,
  metadata TEXT NOT NULL,
  acl TEXT,
  PRIMARY KEY (account, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY,
  queue_id INTEGER NOT NULL,
  id TEXT NOT NULL,
  text TEXT NOT NULL,
  inserted_ms INTEGER NOT NULL,
  expires_ms INTEGER,
  visible_ms INTEGER NOT NULL,
  dequeue_count INTEGER NOT NULL,
  pop_receipt TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS messages_by_id ON messages (queue_id, id);
CREATE INDEX IF NOT EXISTS messages_by_visibility ON messages (queue_id, visible_ms, seq);
CREATE INDEX IF NOT EXISTS messages_by_expiry ON messages (expires_ms) WHERE expires_ms IS NOT NULL;
`;

/** The columns a StoredMessage is read from (queue-rows.ts), by the reader and the writer. */
export const messageColumns = 'id, text, inserted_ms, expires_ms, visible_ms, dequeue_count, pop_receipt';
