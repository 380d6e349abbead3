// Every tool command, in the order `cerulean --help` lists them. A new command: a module in this
// folder exporting a CliCommand, and one line here.
import type { CliCommand } from '../command.js';
import { backupCommand } from './backup.js';
import { blobsCommand, containersCommand } from './blobs.js';
import { copyCommand } from './copy.js';
import { deleteCommand, getCommand, putCommand } from './entity.js';
import { exportCommand } from './export.js';
import { faultsCommand } from './faults.js';
import { importCommand } from './import.js';
import { insightsCommand } from './insights.js';
import { queueCommand, queuesCommand } from './queues.js';
import { restoreCommand } from './restore.js';
import { statsCommand } from './stats.js';
import { tablesCommand } from './tables.js';

export const commands: readonly CliCommand[] = [
  exportCommand,
  importCommand,
  copyCommand,
  backupCommand,
  restoreCommand,
  tablesCommand,
  getCommand,
  putCommand,
  deleteCommand,
  queuesCommand,
  queueCommand,
  containersCommand,
  blobsCommand,
  statsCommand,
  insightsCommand,
  faultsCommand,
];
