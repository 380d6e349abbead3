import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import {
  parseServiceProperties,
  writeServiceProperties,
  writeServiceStats,
  type ServiceProperties,
} from '../../src/wire/service-properties-xml.js';
import { defaultServiceProperties } from '../../src/storage/service-properties.js';

function refused(text: string, code: ErrorCode): void {
  assert.throws(
    () => parseServiceProperties(text),
    (error: unknown) => error instanceof StorageError && error.code === code,
    text,
  );
}

const documented = `<?xml version="1.0" encoding="utf-8"?>
<StorageServiceProperties>
  <Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write>
    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>
  <HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>
    <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>
  <MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>
    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>
  <Cors>
    <CorsRule>
      <AllowedOrigins>http://www.fabrikam.com,http://www.contoso.com</AllowedOrigins>
      <AllowedMethods>GET,PUT</AllowedMethods>
      <MaxAgeInSeconds>500</MaxAgeInSeconds>
      <ExposedHeaders>x-ms-meta-data*,x-ms-meta-customheader</ExposedHeaders>
      <AllowedHeaders>x-ms-meta-target*,x-ms-meta-customheader</AllowedHeaders>
    </CorsRule>
  </Cors>
</StorageServiceProperties>`;

const documentedProperties: ServiceProperties = {
  logging: { version: '1.0', delete: true, read: false, write: true, retentionPolicy: { enabled: false } },
  hourMetrics: { version: '1.0', enabled: true, includeApis: false, retentionPolicy: { enabled: true, days: 7 } },
  minuteMetrics: { version: '1.0', enabled: false, retentionPolicy: { enabled: false } },
  cors: [
    {
      allowedOrigins: ['http://www.fabrikam.com', 'http://www.contoso.com'],
      allowedMethods: ['GET', 'PUT'],
      maxAgeInSeconds: 500,
      exposedHeaders: ['x-ms-meta-data*', 'x-ms-meta-customheader'],
      allowedHeaders: ['x-ms-meta-target*', 'x-ms-meta-customheader'],
    },
  ],
};

const rule = (inner: string) =>
  `<StorageServiceProperties><Cors><CorsRule>${inner}</CorsRule></Cors></StorageServiceProperties>`;
const fullRule = (over: Record<string, string> = {}) => {
  const fields = {
    AllowedOrigins: '*',
    AllowedMethods: 'GET',
    MaxAgeInSeconds: '0',
    ExposedHeaders: '',
    AllowedHeaders: '',
    ...over,
  };
  return rule(
    Object.entries(fields)
      .map(([name, value]) => `<${name}>${value}</${name}>`)
      .join(''),
  );
};

describe('parseServiceProperties (Azure REST: set-table-service-properties)', () => {
  test('the documented body', () => {
    assert.deepEqual(parseServiceProperties(documented), documentedProperties);
  });

  test('sections left out are left out of the update', () => {
    assert.deepEqual(parseServiceProperties('<StorageServiceProperties><Cors/></StorageServiceProperties>'), {
      cors: [],
    });
    assert.deepEqual(parseServiceProperties('<StorageServiceProperties/>'), {});
  });

  test('metrics: Version defaults to 1.0, IncludeAPIs to false when enabled; Days dropped when disabled', () => {
    const update = parseServiceProperties(
      '<StorageServiceProperties><HourMetrics><Enabled>true</Enabled></HourMetrics>' +
        '<MinuteMetrics><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled><Days>3</Days></RetentionPolicy></MinuteMetrics></StorageServiceProperties>',
    );
    assert.deepEqual(update.hourMetrics, {
      version: '1.0',
      enabled: true,
      includeApis: false,
      retentionPolicy: { enabled: false },
    });
    assert.deepEqual(update.minuteMetrics, { version: '1.0', enabled: false, retentionPolicy: { enabled: false } });
  });

  test('five CORS rules pass, six fail', () => {
    const one =
      '<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds><ExposedHeaders/><AllowedHeaders/></CorsRule>';
    const rules = (n: number) => `<StorageServiceProperties><Cors>${one.repeat(n)}</Cors></StorageServiceProperties>`;
    assert.equal(parseServiceProperties(rules(5)).cors?.length, 5);
    refused(rules(6), 'InvalidXmlDocument');
  });

  test('CORS values: methods upper-cased, PATCH and MERGE allowed; bad values refused', () => {
    assert.deepEqual(
      parseServiceProperties(fullRule({ AllowedMethods: 'get, merge,PATCH' })).cors?.[0]?.allowedMethods,
      ['GET', 'MERGE', 'PATCH'],
    );
    refused(fullRule({ AllowedMethods: 'GET,TRACE' }), 'InvalidXmlNodeValue');
    refused(fullRule({ AllowedMethods: '' }), 'InvalidXmlNodeValue');
    refused(fullRule({ AllowedOrigins: '' }), 'InvalidXmlNodeValue');
    refused(fullRule({ AllowedOrigins: '*,http://a' }), 'InvalidXmlNodeValue');
    refused(fullRule({ MaxAgeInSeconds: '-1' }), 'InvalidXmlNodeValue');
    refused(fullRule({ MaxAgeInSeconds: '99999999999' }), 'InvalidXmlNodeValue');
    refused(
      fullRule({ AllowedHeaders: Array.from({ length: 65 }, (_, i) => `h${i}`).join(',') }),
      'InvalidXmlNodeValue',
    );
    refused(rule('<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>'), 'MissingRequiredXmlNode');
  });

  test('booleans, retention days', () => {
    const logging = (inner: string) =>
      `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write>${inner}</Logging></StorageServiceProperties>`;
    assert.equal(
      parseServiceProperties(logging('<RetentionPolicy><Enabled>true</Enabled><Days>365</Days></RetentionPolicy>'))
        .logging?.retentionPolicy.days,
      365,
    );
    refused(
      logging('<RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy>'),
      'InvalidXmlNodeValue',
    );
    refused(logging('<RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy>'), 'InvalidXmlNodeValue');
    refused(logging('<RetentionPolicy><Enabled>true</Enabled></RetentionPolicy>'), 'MissingRequiredXmlNode');
    refused(logging('<RetentionPolicy><Enabled>yes</Enabled></RetentionPolicy>'), 'InvalidXmlNodeValue');
    refused(
      '<StorageServiceProperties><Logging><Version>1.0</Version></Logging></StorageServiceProperties>',
      'MissingRequiredXmlNode',
    );
  });

  test('a wrong root, a repeated section, malformed XML', () => {
    refused('<ServiceProperties/>', 'InvalidXmlDocument');
    refused('<StorageServiceProperties><Cors/><Cors/></StorageServiceProperties>', 'InvalidXmlDocument');
    refused('<StorageServiceProperties>', 'InvalidXmlDocument');
  });
});

describe('writeServiceProperties (Azure REST: get-table-service-properties)', () => {
  test('a fresh account: logging off, metrics disabled, <Cors />, in the documented order', () => {
    assert.equal(
      writeServiceProperties(defaultServiceProperties),
      '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete>' +
        '<Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>' +
        '<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>' +
        '<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>' +
        '<Cors /></StorageServiceProperties>',
    );
  });

  test('round trip of the documented body', () => {
    assert.deepEqual(parseServiceProperties(writeServiceProperties(documentedProperties)), documentedProperties);
  });
});

test('writeServiceStats: live, with an RFC 1123 time', () => {
  assert.equal(
    writeServiceStats('live', new Date('2021-01-19T22:28:43Z')),
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status>' +
      '<LastSyncTime>Tue, 19 Jan 2021 22:28:43 GMT</LastSyncTime></GeoReplication></StorageServiceStats>',
  );
});

test('writeServiceStats: bootstrap, LastSyncTime not yet known', () => {
  assert.equal(
    writeServiceStats('bootstrap', undefined),
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>bootstrap</Status>' +
      '<LastSyncTime></LastSyncTime></GeoReplication></StorageServiceStats>',
  );
});
