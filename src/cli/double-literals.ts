// Keeps Doubles Doubles on the way in from any endpoint. The service writes an integral Double
// without annotation as `2.0` (and so does Azurite), and the SDK's JSON.parse turns that into the
// number 2, which it then reads as an Int32. This policy reads the response body with our own
// JSON reader, which keeps number literals as written, and annotates every unannotated number
// literal with a decimal point or an exponent as Edm.Double before the SDK sees the body.
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import { type JsonValue, readJson } from '../protocol/json-reader.js';

const annotationSuffix = '@odata.type';

export const doubleLiteralsPolicy: PipelinePolicy = {
  name: 'ceruleanDoubleLiterals',
  async sendRequest(request, next) {
    const response = await next(request);
    const type = response.headers.get('content-type') ?? '';
    if (response.bodyAsText && response.status === 200 && type.includes('json')) {
      response.bodyAsText = annotateDoubleLiterals(response.bodyAsText);
    }
    return response;
  },
};

/** A query or point-read body with Double annotations added where only the literal said Double. */
export function annotateDoubleLiterals(body: string): string {
  let root: JsonValue;
  try {
    root = readJson(body);
  } catch {
    return body; // not ours to judge: the SDK reports it
  }
  if (root.kind !== 'object') return body;
  const entities = root.members.find(([name]) => name === 'value')?.[1];
  if (entities?.kind === 'array') {
    return writeJson({ kind: 'object', members: root.members.map(([name, value]) => [name, name === 'value' ? annotateAll(value) : value]) });
  }
  return writeJson(annotateEntity(root));
}

function annotateAll(array: JsonValue): JsonValue {
  return array.kind === 'array' ? { kind: 'array', items: array.items.map(annotateEntity) } : array;
}

function annotateEntity(entity: JsonValue): JsonValue {
  if (entity.kind !== 'object') return entity;
  const names = new Set(entity.members.map(([name]) => name));
  const members: (readonly [string, JsonValue])[] = [];
  for (const member of entity.members) {
    members.push(member);
    const [name, value] = member;
    if (value.kind === 'number' && /[.eE]/.test(value.text) && !names.has(name + annotationSuffix)) {
      members.push([name + annotationSuffix, { kind: 'string', value: 'Edm.Double' }]);
    }
  }
  return { kind: 'object', members };
}

function writeJson(value: JsonValue): string {
  switch (value.kind) {
    case 'object':
      return `{${value.members.map(([name, member]) => `${JSON.stringify(name)}:${writeJson(member)}`).join(',')}}`;
    case 'array':
      return `[${value.items.map(writeJson).join(',')}]`;
    case 'string':
      return JSON.stringify(value.value);
    case 'number':
      return value.text;
    case 'boolean':
      return String(value.value);
    case 'null':
      return 'null';
  }
}
