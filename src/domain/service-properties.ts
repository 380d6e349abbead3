// The settings of Get/Set Service Properties, shared by the service that keeps them, the XML that
// carries them and the front door that applies their CORS rules.

export interface RetentionPolicy {
  readonly enabled: boolean;
  /** 1-365, only when enabled. */
  readonly days?: number;
}

export interface LoggingSettings {
  readonly version: string;
  readonly delete: boolean;
  readonly read: boolean;
  readonly write: boolean;
  readonly retentionPolicy: RetentionPolicy;
}

export interface MetricsSettings {
  readonly version: string;
  readonly enabled: boolean;
  /** Only when enabled. */
  readonly includeApis?: boolean;
  readonly retentionPolicy: RetentionPolicy;
}

export interface CorsRule {
  /** Origins as given, or the single entry '*'. */
  readonly allowedOrigins: readonly string[];
  /** Upper-case HTTP methods. */
  readonly allowedMethods: readonly string[];
  /** Header names; an entry ending in '*' is a prefix. */
  readonly allowedHeaders: readonly string[];
  readonly exposedHeaders: readonly string[];
  readonly maxAgeInSeconds: number;
}

export interface ServiceProperties {
  readonly logging: LoggingSettings;
  readonly hourMetrics: MetricsSettings;
  readonly minuteMetrics: MetricsSettings;
  readonly cors: readonly CorsRule[];
}

/** What one Set Table Service Properties names; the sections it leaves out keep their values. */
export type ServicePropertiesUpdate = Partial<ServiceProperties>;
