// Every service over one store: what the front door and the tools call.
import type { ReplicationSource } from '../../storage/replication.js';
import type { TableStore } from '../../storage/table-store.js';
import { AclService } from './acl.js';
import { EntityService } from './entities.js';
import { QueryService } from './query.js';
import { ServicePropertiesService } from '../../storage/service-properties.js';
import { TableService } from './tables.js';

export interface TableServices {
  readonly tables: TableService;
  readonly entities: EntityService;
  readonly queries: QueryService;
  readonly acls: AclService;
  readonly serviceProperties: ServicePropertiesService;
  /** The secondary endpoint's replication status (Get Service Stats); undefined: not a replica. */
  readonly replication?: ReplicationSource | undefined;
}

export function createTableServices(store: TableStore): TableServices {
  return {
    tables: new TableService(store),
    entities: new EntityService(store),
    queries: new QueryService(store),
    acls: new AclService(store),
    serviceProperties: new ServicePropertiesService(store),
  };
}
