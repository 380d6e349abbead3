// The Blob service's own service properties: those every service keeps (logging, metrics, CORS, in
// ServicePropertiesService) and DefaultServiceVersion
// (https://learn.microsoft.com/rest/api/storageservices/set-blob-service-properties), kept as one
// more account setting and written in the same atomic step as the sections of the same request.
import type { SettingKey } from '../../storage/table-store.js';
import { ServicePropertiesService } from '../../storage/service-properties.js';
import type { BlobPropertiesKeeper, BlobServiceProperties, BlobServicePropertiesUpdate } from '../services.js';

const defaultVersionSetting: SettingKey = { scope: 'account', name: 'blob.properties.defaultServiceVersion' };

export class BlobServicePropertiesService extends ServicePropertiesService implements BlobPropertiesKeeper {
  constructor(store: ConstructorParameters<typeof ServicePropertiesService>[0]) {
    super(store, 'blob');
  }

  override async get(account: string): Promise<BlobServiceProperties> {
    const [shared, defaultServiceVersion] = await Promise.all([
      super.get(account),
      this.store.getSetting(account, defaultVersionSetting),
    ]);
    return defaultServiceVersion === undefined ? shared : { ...shared, defaultServiceVersion };
  }

  override async set(account: string, update: BlobServicePropertiesUpdate): Promise<void> {
    const version = update.defaultServiceVersion;
    const own = version === undefined ? [] : [{ key: defaultVersionSetting, value: version }];
    await this.putChanges(account, [...this.changesOf(update), ...own]);
  }
}
