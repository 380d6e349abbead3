// The Blob service's own service properties: those every service keeps (logging, metrics, CORS, in
// ServicePropertiesService), DefaultServiceVersion and DeleteRetentionPolicy
// (https://learn.microsoft.com/rest/api/storageservices/set-blob-service-properties), kept as one
// more account setting each and written in the same atomic step as the sections of the same request.
import type { SettingKey } from '../../storage/table-store.js';
import { ServicePropertiesService } from '../../storage/service-properties.js';
import type {
  BlobPropertiesKeeper,
  BlobServiceProperties,
  BlobServicePropertiesUpdate,
  DeleteRetentionPolicy,
} from '../services.js';

const defaultVersionSetting: SettingKey = { scope: 'account', name: 'blob.properties.defaultServiceVersion' };
const deleteRetentionSetting: SettingKey = { scope: 'account', name: 'blob.properties.deleteRetentionPolicy' };
const deleteRetentionOff: DeleteRetentionPolicy = { enabled: false };

export class BlobServicePropertiesService extends ServicePropertiesService implements BlobPropertiesKeeper {
  constructor(store: ConstructorParameters<typeof ServicePropertiesService>[0]) {
    super(store, 'blob');
  }

  override async get(account: string): Promise<BlobServiceProperties> {
    const [shared, defaultServiceVersion, deleteRetentionPolicy] = await Promise.all([
      super.get(account),
      this.store.getSetting(account, defaultVersionSetting),
      this.deleteRetention(account),
    ]);
    const withVersion = defaultServiceVersion === undefined ? shared : { ...shared, defaultServiceVersion };
    return { ...withVersion, deleteRetentionPolicy };
  }

  async deleteRetention(account: string): Promise<DeleteRetentionPolicy> {
    const stored = await this.store.getSetting(account, deleteRetentionSetting);
    return stored === undefined ? deleteRetentionOff : (JSON.parse(stored) as DeleteRetentionPolicy);
  }

  override async set(account: string, update: BlobServicePropertiesUpdate): Promise<void> {
    const version = update.defaultServiceVersion;
    const retention = update.deleteRetentionPolicy;
    const own = [
      ...(version === undefined ? [] : [{ key: defaultVersionSetting, value: version }]),
      ...(retention === undefined ? [] : [{ key: deleteRetentionSetting, value: JSON.stringify(retention) }]),
    ];
    await this.putChanges(account, [...this.changesOf(update), ...own]);
  }
}
