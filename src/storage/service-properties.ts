// Table service properties per account (Azure REST: get-table-service-properties, set-table-service-properties,
// get-table-service-stats): logging and metrics settings,
// which are kept and returned but drive nothing, and the CORS rules src/http/cors.ts applies.
// Every set is durable before it is acknowledged. The XML bodies are src/wire/service-properties-xml.ts.
import type {
  CorsRule,
  MetricsSettings,
  ServiceProperties,
  ServicePropertiesUpdate,
} from '../domain/service-properties.js';
import type { SettingChange, SettingKey, TableStore } from './table-store.js';

const disabledMetrics: MetricsSettings = { version: '1.0', enabled: false, retentionPolicy: { enabled: false } };

/**
 * A fresh account: no logging, metrics off, no CORS rules (Azure REST: get-table-service-properties recommendation).
 */
export const defaultServiceProperties: ServiceProperties = {
  logging: { version: '1.0', delete: false, read: false, write: false, retentionPolicy: { enabled: false } },
  hourMetrics: disabledMetrics,
  minuteMetrics: disabledMetrics,
  cors: [],
};

/** Each section is its own account setting, so that a partial update needs no read first. */
const sections = [
  'logging',
  'hourMetrics',
  'minuteMetrics',
  'cors',
] as const satisfies readonly (keyof ServiceProperties)[];
/** Where every section lived together before they were split; still read, never written. */
const legacySetting: SettingKey = { scope: 'account', name: 'properties' };

/**
 * Get and Set Table (or Queue) Service Properties. Nothing is cached: a change made through one
 * process is in force on the next request to any process over the same store. Each service keeps
 * its own properties: the queue service's settings are named `queue.properties.*`, the blob service's
 * `blob.properties.*`.
 */
export class ServicePropertiesService {
  constructor(
    protected readonly store: TableStore,
    private readonly service: 'table' | 'queue' | 'blob' = 'table',
  ) {}

  async get(account: string): Promise<ServiceProperties> {
    const [legacy, ...stored] = await Promise.all([
      this.service === 'table' ? this.store.getSetting(account, legacySetting) : undefined,
      ...sections.map((section) => this.store.getSetting(account, this.sectionSetting(section))),
    ]);
    const properties: Record<string, unknown> = {
      ...defaultServiceProperties,
      ...(legacy === undefined ? {} : JSON.parse(legacy)),
    };
    sections.forEach((section, i) => {
      const document = stored[i];
      if (document !== undefined) properties[section] = JSON.parse(document);
    });
    return properties as unknown as ServiceProperties;
  }

  /**
   * The account's CORS rules alone, as `get` would answer them: one setting read (the Table service's
   * also reads the legacy setting beside it), for every cross-origin request.
   */
  async cors(account: string): Promise<readonly CorsRule[]> {
    const [legacy, stored] = await Promise.all([
      this.service === 'table' ? this.store.getSetting(account, legacySetting) : undefined,
      this.store.getSetting(account, this.sectionSetting('cors')),
    ]);
    if (stored !== undefined) return JSON.parse(stored) as CorsRule[];
    const legacyProperties = legacy === undefined ? {} : (JSON.parse(legacy) as Partial<ServiceProperties>);
    return 'cors' in legacyProperties ? (legacyProperties.cors as CorsRule[]) : defaultServiceProperties.cors;
  }

  /**
   * Elements omitted from the request keep their current value (Azure REST: set-table-service-properties, unverified
   * for Table): only the sections named are written, all of them in one atomic step.
   */
  async set(account: string, update: ServicePropertiesUpdate): Promise<void> {
    await this.putChanges(account, this.changesOf(update));
  }

  /** The settings an update writes, one per section it names. */
  protected changesOf(update: ServicePropertiesUpdate): SettingChange[] {
    return sections.flatMap((section) => {
      const value = update[section];
      return value === undefined ? [] : [{ key: this.sectionSetting(section), value: JSON.stringify(value) }];
    });
  }

  /** Writes `changes` in one atomic step (a service's own settings beside the shared sections). */
  protected async putChanges(account: string, changes: readonly SettingChange[]): Promise<void> {
    if (changes.length > 0) await this.store.putSettings(account, changes);
  }

  private sectionSetting(section: (typeof sections)[number]): SettingKey {
    const prefix = this.service === 'table' ? '' : `${this.service}.`;
    return { scope: 'account', name: `${prefix}properties.${section}` };
  }
}
