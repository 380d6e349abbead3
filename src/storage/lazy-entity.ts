// An entity as an engine reads it: keys and version at hand, properties kept in the engine's
// stored text and decoded only if something asks for them (a scan's predicate or an encoder that
// cannot splice the text).
import type { Entity, Properties } from '../domain/entity.js';

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
