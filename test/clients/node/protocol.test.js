// The wire protocol itself, with raw HTTP requests (no SDK).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { endpoint } from './helpers.js';

const JSON10 = 'application/x-amz-json-1.0';

async function post(target, body, headers = {}) {
  const res = await fetch(endpoint + '/', {
    method: 'POST',
    headers: { 'Content-Type': JSON10, ...(target ? { 'X-Amz-Target': target } : {}), ...headers },
    body,
  });
  const text = await res.text();
  return { res, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}

function crc32(s) {
  return zlib.crc32 ? zlib.crc32(Buffer.from(s)) : undefined;
}

test('GET / answers the health line', async () => {
  const res = await fetch(endpoint + '/');
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'healthy: dynamodb.us-east-1.amazonaws.com ');
  assert.equal(res.headers.get('x-amz-crc32'), '3128867991');
});

test('responses carry x-amzn-RequestId (52 chars) and a correct x-amz-crc32', async () => {
  const { res, text } = await post('DynamoDB_20120810.ListTables', '{}');
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('x-amzn-requestid'), /^[A-Z0-9]{52}$/);
  assert.equal(res.headers.get('content-type'), JSON10);
  const c = crc32(text);
  if (c !== undefined) assert.equal(res.headers.get('x-amz-crc32'), String(c));
  assert.ok(Array.isArray(JSON.parse(text).TableNames));
});

test('unknown or missing target: UnknownOperationException', async () => {
  for (const target of ['DynamoDB_20120810.Bogus', 'Bogus', undefined]) {
    const { res, json } = await post(target, '{}');
    assert.equal(res.status, 400);
    assert.equal(json.__type, 'com.amazon.coral.service#UnknownOperationException');
  }
});

test('invalid JSON or a non-object body: SerializationException', async () => {
  for (const body of ['{bad', '[1]', '7', '', '{"a":', '{"a":"\\u0000"}']) {
    const { res, json } = await post('DynamoDB_20120810.GetItem', body);
    assert.equal(res.status, 400, body);
    assert.equal(json.__type, 'com.amazon.coral.service#SerializationException', body);
  }
});

test('a body over 16 MB is refused with HTTP 413', async () => {
  const big = '{"TableName":"x","Item":{"pk":{"S":"' + 'x'.repeat(16 * 1024 * 1024) + '"}}}';
  const { res } = await post('DynamoDB_20120810.PutItem', big);
  assert.equal(res.status, 413);
});

test('a wrong content type is not an operation', async () => {
  const { res, text } = await post('DynamoDB_20120810.ListTables', '{}', { 'Content-Type': 'text/plain' });
  assert.equal(res.status, 404);
  assert.equal(text, '<UnknownOperationException/>\n');
});

test('errors from the extension keep DynamoDB shape', async () => {
  const { res, json } = await post('DynamoDB_20120810.GetItem',
    '{"TableName":"no_such_table_xyz","Key":{"pk":{"S":"a"}}}');
  assert.equal(res.status, 400);
  assert.equal(json.__type, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException');
  assert.equal(typeof json.message, 'string');
});

test('keep-alive: many requests, concurrently', async () => {
  const results = await Promise.all(Array.from({ length: 64 }, () => post('DynamoDB_20120810.ListTables', '{}')));
  for (const r of results) assert.equal(r.res.status, 200);
});
