// The XML bodies of Get/Set Table Service Properties and Get Table Service Stats
// (Azure REST: set-table-service-properties, get-table-service-stats), and the settings they carry. Pure: no I/O.
import { StorageError } from '../errors.js';
import { corsListEntriesMax, corsRulesMax, retentionDaysMax } from '../limits.js';
import type {
  CorsRule,
  LoggingSettings,
  MetricsSettings,
  RetentionPolicy,
  ServiceProperties,
  ServicePropertiesUpdate,
} from '../domain/service-properties.js';
import { childNamed, leafText, parseXml, writeXmlDocument, type XmlElement, type XmlNode } from './xml.js';

export type {
  CorsRule,
  LoggingSettings,
  MetricsSettings,
  RetentionPolicy,
  ServiceProperties,
  ServicePropertiesUpdate,
} from '../domain/service-properties.js';

/**
 * Reads a Set Table Service Properties body. Unknown elements are ignored
 * (docs/protocol-notes.md#unknown-input-is-ignored;
 * unverified for XML); malformed values are InvalidXmlNodeValue, missing required ones
 * MissingRequiredXmlNode, more than 5 CORS rules InvalidXmlDocument (codes unverified for Table).
 */
export function parseServiceProperties(text: string): ServicePropertiesUpdate {
  const root = parseXml(text);
  if (root.name !== 'StorageServiceProperties') {
    throw new StorageError(
      'InvalidXmlDocument',
      `The root element must be StorageServiceProperties, not ${root.name}.`,
    );
  }
  const logging = childNamed(root, 'Logging');
  const hourMetrics = childNamed(root, 'HourMetrics');
  const minuteMetrics = childNamed(root, 'MinuteMetrics');
  const cors = childNamed(root, 'Cors');
  return {
    ...(logging && { logging: loggingOf(logging) }),
    ...(hourMetrics && { hourMetrics: metricsOf(hourMetrics) }),
    ...(minuteMetrics && { minuteMetrics: metricsOf(minuteMetrics) }),
    ...(cors && { cors: corsOf(cors) }),
  };
}

/**
 * In the documented element order: Logging, HourMetrics, MinuteMetrics, Cors (Azure REST:
 * get-table-service-properties).
 */
export function writeServiceProperties(properties: ServiceProperties): string {
  const { logging, hourMetrics, minuteMetrics, cors } = properties;
  return writeXmlDocument({
    name: 'StorageServiceProperties',
    content: [
      {
        name: 'Logging',
        content: [
          leaf('Version', logging.version),
          leaf('Delete', logging.delete),
          leaf('Read', logging.read),
          leaf('Write', logging.write),
          retentionNode(logging.retentionPolicy),
        ],
      },
      metricsNode('HourMetrics', hourMetrics),
      metricsNode('MinuteMetrics', minuteMetrics),
      { name: 'Cors', content: cors.map(corsRuleNode) },
    ],
  });
}

/**
 * Get Table Service Stats: a local server is its own live replica (Azure REST: get-table-service-stats recommendation).
 */
/** LastSyncTime is empty when it is not known (a secondary still in bootstrap). */
export function writeServiceStats(status: string, lastSyncTime: Date | undefined): string {
  const syncTime = lastSyncTime === undefined ? '' : lastSyncTime.toUTCString();
  return writeXmlDocument({
    name: 'StorageServiceStats',
    content: [{ name: 'GeoReplication', content: [leaf('Status', status), leaf('LastSyncTime', syncTime)] }],
  });
}

function leaf(name: string, value: string | number | boolean): XmlNode {
  return { name, content: String(value) };
}

function retentionNode(policy: RetentionPolicy): XmlNode {
  const content = [leaf('Enabled', policy.enabled)];
  if (policy.days !== undefined) content.push(leaf('Days', policy.days));
  return { name: 'RetentionPolicy', content };
}

function metricsNode(name: string, metrics: MetricsSettings): XmlNode {
  const content = [leaf('Version', metrics.version), leaf('Enabled', metrics.enabled)];
  if (metrics.includeApis !== undefined) content.push(leaf('IncludeAPIs', metrics.includeApis));
  content.push(retentionNode(metrics.retentionPolicy));
  return { name, content };
}

function corsRuleNode(rule: CorsRule): XmlNode {
  return {
    name: 'CorsRule',
    content: [
      leaf('AllowedOrigins', rule.allowedOrigins.join(',')),
      leaf('AllowedMethods', rule.allowedMethods.join(',')),
      leaf('MaxAgeInSeconds', rule.maxAgeInSeconds),
      leaf('ExposedHeaders', rule.exposedHeaders.join(',')),
      leaf('AllowedHeaders', rule.allowedHeaders.join(',')),
    ],
  };
}

function loggingOf(element: XmlElement): LoggingSettings {
  return {
    version: requiredText(element, 'Version'),
    delete: booleanOf(element, 'Delete'),
    read: booleanOf(element, 'Read'),
    write: booleanOf(element, 'Write'),
    retentionPolicy: retentionOf(element),
  };
}

/** Version defaults to 1.0 and IncludeAPIs to false when enabled: the JS SDK may omit both. */
function metricsOf(element: XmlElement): MetricsSettings {
  const enabled = booleanOf(element, 'Enabled');
  const version = optionalText(element, 'Version') ?? '1.0';
  const retentionPolicy = retentionOf(element);
  if (!enabled) return { version, enabled, retentionPolicy };
  const includeApis = childNamed(element, 'IncludeAPIs') === undefined ? false : booleanOf(element, 'IncludeAPIs');
  return { version, enabled, includeApis, retentionPolicy };
}

/** An absent RetentionPolicy is a disabled one; Days is required when enabled and dropped otherwise. */
function retentionOf(parent: XmlElement): RetentionPolicy {
  return retentionPolicyOf(childNamed(parent, 'RetentionPolicy'));
}

/** A retention policy element (Enabled, and Days 1-365 when enabled); absent, a disabled one. */
export function retentionPolicyOf(element: XmlElement | undefined): RetentionPolicy {
  if (element === undefined || !booleanOf(element, 'Enabled')) return { enabled: false };
  const days = integerOf(element, 'Days');
  if (days < 1 || days > retentionDaysMax) throw invalidValue('Days', String(days));
  return { enabled: true, days };
}

const corsMethods: ReadonlySet<string> = new Set(['DELETE', 'GET', 'HEAD', 'MERGE', 'PATCH', 'POST', 'OPTIONS', 'PUT']);

function corsOf(element: XmlElement): CorsRule[] {
  const rules = element.children.filter((child) => child.name === 'CorsRule');
  if (rules.length > corsRulesMax) {
    throw new StorageError('InvalidXmlDocument', `At most ${corsRulesMax} CORS rules may be set.`);
  }
  return rules.map(corsRuleOf);
}

/**
 * AllowedMethods may name DELETE GET HEAD MERGE POST OPTIONS PUT (Azure REST: get-table-service-properties) and, since
 * the SDKs merge with it, PATCH (recommendation).
 */
function corsRuleOf(element: XmlElement): CorsRule {
  const allowedOrigins = listOf(element, 'AllowedOrigins');
  if (allowedOrigins.length === 0) throw invalidValue('AllowedOrigins', '');
  if (allowedOrigins.includes('*') && allowedOrigins.length > 1) {
    throw invalidValue('AllowedOrigins', allowedOrigins.join(','));
  }
  const allowedMethods = listOf(element, 'AllowedMethods').map((method) => method.toUpperCase());
  const unknownMethod = allowedMethods.find((method) => !corsMethods.has(method));
  if (allowedMethods.length === 0 || unknownMethod !== undefined) {
    throw invalidValue('AllowedMethods', unknownMethod ?? '');
  }
  return {
    allowedOrigins,
    allowedMethods,
    allowedHeaders: listOf(element, 'AllowedHeaders'),
    exposedHeaders: listOf(element, 'ExposedHeaders'),
    maxAgeInSeconds: integerOf(element, 'MaxAgeInSeconds'),
  };
}

/** A required comma-separated list; entries are trimmed and empty ones dropped. */
function listOf(parent: XmlElement, name: string): string[] {
  const text = requiredElementText(parent, name);
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length > corsListEntriesMax) throw invalidValue(name, `${entries.length} entries`);
  return entries;
}

function booleanOf(parent: XmlElement, name: string): boolean {
  const text = requiredText(parent, name);
  if (text !== 'true' && text !== 'false') throw invalidValue(name, text);
  return text === 'true';
}

/** A non-negative Int32. */
function integerOf(parent: XmlElement, name: string): number {
  const text = requiredText(parent, name);
  const value = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(value <= 2 ** 31 - 1)) throw invalidValue(name, text);
  return value;
}

/** The trimmed text of a required, non-empty leaf. */
function requiredText(parent: XmlElement, name: string): string {
  const text = requiredElementText(parent, name).trim();
  if (text === '') throw invalidValue(name, text);
  return text;
}

/** The text of a required leaf that may be empty. */
function requiredElementText(parent: XmlElement, name: string): string {
  const element = childNamed(parent, name);
  if (element === undefined)
    throw new StorageError('MissingRequiredXmlNode', `${parent.name} needs a ${name} element.`);
  return leafText(element);
}

function optionalText(parent: XmlElement, name: string): string | undefined {
  const element = childNamed(parent, name);
  return element === undefined ? undefined : leafText(element).trim() || undefined;
}

function invalidValue(name: string, value: string): StorageError {
  return new StorageError('InvalidXmlNodeValue', `The value '${value}' of ${name} is not valid.`);
}
