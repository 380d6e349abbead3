// Backup and restore of a data store, whatever its engine: the one entry point the command line
// uses. SQLite data directories are copied with SQLite's online backup; a PostgreSQL database has
// its own tools, which do it better than we could.
import { backupSqlite, restoreSqlite, type ServiceCounts } from './sqlite/backup.js';
import type { ContentSummary } from './sqlite/backup-content.js';

export type { ContentSummary, ServiceCounts };

/** Where the data lives: a data directory (SQLite) or a database URL (a server engine). */
export type DataSource = { readonly location: string } | { readonly databaseUrl: string };

export interface BackupSummary {
  readonly bytes: number;
  readonly tables: number;
  /** What the backup holds, per service. */
  readonly counts: ServiceCounts;
  /** The blob content files (beside the SQLite database) in the backup. */
  readonly content: ContentSummary;
}

/** The engine cannot do this itself; `message` says which tool can. */
export class UseEngineToolsError extends Error {
  override readonly name = 'UseEngineToolsError';
}

export function backupData(source: DataSource, file: string): Promise<BackupSummary> {
  if ('databaseUrl' in source) throw engineTools(source.databaseUrl, 'backup');
  return backupSqlite(source.location, file);
}

export function restoreData(
  file: string,
  target: DataSource,
): { tables: number; counts: ServiceCounts; content: ContentSummary } {
  if ('databaseUrl' in target) throw engineTools(target.databaseUrl, 'restore');
  return restoreSqlite(file, target.location);
}

function engineTools(databaseUrl: string, what: 'backup' | 'restore'): Error {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    const tool = what === 'backup' ? 'pg_dump -Fc DATABASE_URL > FILE' : 'pg_restore -d DATABASE_URL FILE';
    return new UseEngineToolsError(`a PostgreSQL database is backed up and restored with its own tools: ${tool}`);
  }
  return new Error(`unsupported database URL: ${databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}`);
}
