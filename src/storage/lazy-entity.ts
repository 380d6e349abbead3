// An entity as an engine reads it: keys and version at hand, properties kept in the engine's
// stored text and decoded only if something asks for them (a scan's predicate or an encoder that
// cannot splice the text).
import type { Entity, Properties } from '../domain/entity.js';
import { decodeStoredProperties } from './stored-json.js';

export class LazyEntity implements Entity {
  private decoded: Properties | undefined;

  constructor(
    readonly partitionKey: string,
    readonly rowKey: string,
    readonly timestamp: bigint,
    protected readonly stored: string,
    private readonly decode: (stored: string) => Properties,
  ) {}

  get properties(): Properties {
    this.decoded ??= this.decode(this.stored);
    return this.decoded;
  }
}

/**
 * A stored entity in the stored JSON form (stored-json.ts), as an engine that keeps that text
 * reads it: the text is spliced into responses where it can be.
 */
export class StoredEntity extends LazyEntity {
  constructor(partitionKey: string, rowKey: string, timestamp: bigint, storedJson: string) {
    super(partitionKey, rowKey, timestamp, storedJson, decodeStoredProperties);
  }

  /** The stored form is Entity.json's form. */
  get json(): string {
    return this.stored;
  }
}
