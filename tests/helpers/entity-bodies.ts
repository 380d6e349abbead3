// Entity request bodies for differential tests of the body decoders: random members of every EDM
// type, in canonical, unusual-but-valid and invalid spellings, with annotation look-alikes,
// repeated and invalid names, ignored control members and syntax damage.

const q = (text: string): string => JSON.stringify(text);
const member = (name: string, valueJson: string): string => `${q(name)}:${valueJson}`;
const annotation = (name: string, type: string): string => member(`${name}@odata.type`, q(type));

/** Value spellings by EDM type: canonical, non-canonical but valid, and invalid. */
const literals: Record<string, readonly string[]> = {
  'Edm.String': [
    '"plain"',
    '""',
    '"é ü 中文"',
    '"😀𝒜"',
    '"a\\"b\\\\c\\/d\\n\\t\\u00e9"',
    '"\\ud83d\\ude00"',
    '"\\ud800 lone"',
    '"\\udc00"',
    '"x@odata.type\\":\\"Edm.Int64\\","',
    '"\u2028\u2029"',
    '"\u0001"',
    '"\\x"',
    '"\\u12"',
    '5',
    'true',
    '[1]',
    '{"a":1}',
  ],
  'Edm.Int32': [
    '0',
    '5',
    '-5',
    '-0',
    '2147483647',
    '2147483648',
    '-2147483648',
    '-2147483649',
    '1e2',
    '5.0',
    '"5"',
    '"+5"',
    '"007"',
    '" 5"',
    '"abc"',
    '00',
    '123456789',
    '1234567890',
  ],
  'Edm.Int64': [
    '"123"',
    '"-0"',
    '"007"',
    '"+5"',
    '"0"',
    '"9223372036854775807"',
    '"9223372036854775808"',
    '"-9223372036854775808"',
    '123',
    '"12345678901234567890"',
    '"123456789012345678"',
    '"1.5"',
    '1.5',
  ],
  'Edm.Double': [
    '1.5',
    '2.0',
    '1e300',
    '1e400',
    '-0.0',
    '0.1',
    '1E+24',
    '"NaN"',
    '"Infinity"',
    '"-Infinity"',
    '"INF"',
    '"-INF"',
    '5',
    '"1.50"',
    '".5"',
    '"5."',
    '"abc"',
    'true',
    '-1.25e-7',
  ],
  'Edm.Boolean': ['true', 'false', '"true"', '"false"', '"yes"', '1', 'null'],
  'Edm.DateTime': [
    '"2024-01-01T00:00:00.000Z"',
    '"2024-02-29T12:34:56.1234567Z"',
    '"2023-02-29T00:00:00Z"',
    '"1600-12-31T23:59:59Z"',
    '"1601-01-01T00:00:00Z"',
    '"9999-12-31T23:59:59.9999999Z"',
    '"2024-01-01T00:00:00.12345678Z"',
    '"2024-01-01T00:00:00+01:00"',
    '"2024-01-01T00:00"',
    '"2024-01-01"',
    '"2024-13-01T00:00:00Z"',
    '"2024-01-01T24:00:00Z"',
    '"2024-01-01T00:00:60Z"',
    '"2024-04-31T00:00:00Z"',
    '"2000-02-29T00:00:00.1000000Z"',
    '"1900-02-29T00:00:00Z"',
    '"2024-01-01T00:00:00.0Z"',
    '5',
  ],
  'Edm.Guid': [
    '"0f8fad5b-d9cb-469f-a165-70867728950e"',
    '"0F8FAD5B-D9CB-469F-A165-70867728950E"',
    '"0f8fad5b-d9cb-469f-a165-7086772895"',
    '"{0f8fad5b-d9cb-469f-a165-70867728950e}"',
    '5',
  ],
  'Edm.Binary': [
    '""',
    '"QQ=="',
    '"QR=="',
    '"QUI="',
    '"QUJ="',
    '"QUJD"',
    '"QUJ"',
    '"Q===", "QQ"',
    '"////"',
    '"AP8="',
    '"AP9="',
    '5',
  ],
};
const types = Object.keys(literals);

const goodNames = ['Name', 'Age', '_x', 'é', '𝒜x', 'Ωmega', 'a1'];
const badNames = ['1abc', 'a-b', '', 'a b', 'x@odata.typeY', '\\u0041ge', 'A@odata.type@odata.type'];
const keyValues = ['"p"', '""', '"a/b"', '"with space"', '"é😀"', '"\\u0041"', 'null', '5', '"x\\u0000"', '"\\ud800"'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/**
 * A body of random members; mostly plausible, sometimes hostile. With `keys`, both keys are
 * those (as in a batch of one partition); without, they too are random and sometimes hostile.
 */
export function randomEntityBody(
  random: () => number,
  keys?: { readonly partitionKey: string; readonly rowKey: string },
): string {
  const members: string[] = [];
  if (keys !== undefined) {
    members.push(member('PartitionKey', q(keys.partitionKey)), member('RowKey', q(keys.rowKey)));
  } else {
    if (random() < 0.95) members.push(member('PartitionKey', random() < 0.85 ? '"pk"' : pick(random, keyValues)));
    if (random() < 0.95) members.push(member('RowKey', random() < 0.85 ? '"rk"' : pick(random, keyValues)));
    if (random() < 0.05) members.push(annotation('PartitionKey', pick(random, ['Edm.String', 'Edm.Int32'])));
  }
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) {
    const roll = random();
    const name = roll < 0.9 ? `${pick(random, goodNames)}${i}` : pick(random, badNames);
    const type = pick(random, types);
    const canonical = random() < 0.5;
    const literal = canonical ? literals[type]![0]! : pick(random, literals[type]!);
    const annotated = type === 'Edm.String' || type === 'Edm.Boolean' ? random() < 0.3 : random() < 0.9;
    const value = name.startsWith('\\') ? `${q(name).slice(0, 1)}${name}":${literal}` : member(name, literal);
    if (!annotated) members.push(value);
    else if (random() < 0.8) members.push(annotation(name, type), value);
    else members.push(value, annotation(name, type));
    if (random() < 0.03) members.push(annotation(`${name}z`, type)); // no value
    if (random() < 0.03) members.push(annotation(name, 'Edm.Foo'));
    if (random() < 0.03) members.push(member(name, '1')); // repeated
  }
  if (random() < 0.1) members.push(member('odata.metadata', '"http://x/$metadata#t/@Element"'));
  if (random() < 0.05) members.push(member('odata.etag', '{"nested":[1,2]}'));
  if (random() < 0.1)
    members.push(member('Timestamp', '"2024-01-01T00:00:00Z"'), annotation('Timestamp', 'Edm.DateTime'));
  if (random() < 0.05) members.push(member('Nothing', 'null'));
  for (let i = members.length - 1; i > 0; i--) {
    if (random() < 0.2) {
      const j = Math.floor(random() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
  }
  const separator = random() < 0.1 ? ' ,\n\t' : ',';
  let text = `{${members.join(separator)}}`;
  const syntax = random();
  if (syntax < 0.02) text = `\ufeff${text}`;
  else if (syntax < 0.04) text = `${text.slice(0, -1)},}`;
  else if (syntax < 0.06) text = text.slice(0, Math.floor(random() * text.length));
  else if (syntax < 0.08) text = `${text} x`;
  else if (syntax < 0.1) text = ` \r\n${text}\n `;
  return text;
}
