import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { findRoute, routingError } from '../../src/http/service-definition.js';
import { queueService } from '../../src/queue/definition.js';
import { parseQueueResource } from '../../src/queue/resources.js';

function request(method: string, query: string) {
  return { method, query: new URLSearchParams(query), headers: {} };
}

function operation(method: string, path: string, query = ''): string | undefined {
  return findRoute(queueService.routes, parseQueueResource(path), request(method, query))?.operation;
}

function refused(method: string, path: string, query: string, code: ErrorCode): void {
  assert.equal(operation(method, path, query), undefined, `${method} ${path}?${query} has no route`);
  const error = routingError(queueService, parseQueueResource(path), request(method, query));
  assert.equal(error.code, code, `${method} ${path}?${query}`);
}

describe('the queue route table', () => {
  test('every operation, under its Storage Analytics name', () => {
    assert.equal(operation('GET', '', 'comp=list'), 'ListQueues');
    assert.equal(operation('GET', '/', 'restype=service&comp=properties'), 'GetQueueServiceProperties');
    assert.equal(operation('PUT', '', 'restype=service&comp=properties'), 'SetQueueServiceProperties');
    assert.equal(operation('GET', '', 'restype=service&comp=stats'), 'GetQueueServiceStats');
    assert.equal(operation('PUT', 'q1'), 'CreateQueue');
    assert.equal(operation('DELETE', 'q1'), 'DeleteQueue');
    assert.equal(operation('GET', 'q1', 'comp=metadata'), 'GetQueueMetadata');
    assert.equal(operation('HEAD', 'q1', 'comp=metadata'), 'GetQueueMetadata');
    assert.equal(operation('PUT', 'q1', 'comp=metadata'), 'SetQueueMetadata');
    assert.equal(operation('GET', 'q1', 'comp=acl'), 'GetQueueAcl');
    assert.equal(operation('PUT', 'q1', 'comp=acl'), 'SetQueueAcl');
    assert.equal(operation('POST', 'q1/messages'), 'PutMessage');
    assert.equal(operation('GET', 'q1/messages', 'numofmessages=3'), 'GetMessages');
    assert.equal(operation('GET', 'q1/messages', 'peekonly=true'), 'PeekMessages');
    assert.equal(operation('DELETE', 'q1/messages'), 'ClearMessages');
    assert.equal(operation('DELETE', 'q1/messages/abc', 'popreceipt=x'), 'DeleteMessage');
    assert.equal(operation('PUT', 'q1/messages/abc', 'popreceipt=x&visibilitytimeout=0'), 'UpdateMessage');
  });
  test('resources: percent-decoded segments, one trailing slash ignored', () => {
    assert.deepEqual(parseQueueResource('q1/messages/a%2Bb/'), { kind: 'message', queue: 'q1', id: 'a+b' });
    assert.deepEqual(parseQueueResource(''), { kind: 'service' });
    const invalidUri = (error: unknown) => (error as StorageError).code === 'InvalidUri';
    assert.throws(() => parseQueueResource('q1/other'), invalidUri);
    assert.throws(() => parseQueueResource('q1/messages/a/b'), invalidUri);
  });
  test('an unknown comp is InvalidQueryParameterValue; a method a resource lacks is UnsupportedHttpVerb', () => {
    refused('GET', 'q1', 'comp=nope', 'InvalidQueryParameterValue');
    refused('GET', '', 'comp=properties', 'InvalidQueryParameterValue');
    refused('POST', 'q1/messages', 'comp=peek', 'InvalidQueryParameterValue');
    refused('POST', 'q1', '', 'UnsupportedHttpVerb');
    refused('HEAD', 'q1/messages', '', 'UnsupportedHttpVerb');
    refused('GET', 'q1/messages/abc', '', 'UnsupportedHttpVerb');
  });
});
