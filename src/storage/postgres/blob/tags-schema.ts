// The PostgreSQL table of blob index tags and its index (postgres/blob/tags.ts reads and writes it).
// Apart from tags.ts so that schema.ts imports nothing that imports it back.

/** Migration 6 (schema.ts appends it): the tag rows and their index. */
export const blobTagsMigration = (s: string): string => `
  CREATE TABLE ${s}.blob_tags (
    blob_id bigint NOT NULL REFERENCES ${s}.blobs (id) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    account text NOT NULL,
    container_id bigint NOT NULL,
    container text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    PRIMARY KEY (blob_id, key)
  );
  CREATE INDEX blob_tags_by_value ON ${s}.blob_tags (account, key, value, container, name);`;
