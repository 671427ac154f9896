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
  for (const body of ['{bad', '[1]', '7', '', '{"a":']) {
    const { res, json } = await post('DynamoDB_20120810.GetItem', body);
    assert.equal(res.status, 400, body);
    assert.equal(json.__type, 'com.amazon.coral.service#SerializationException', body);
  }
  // U+0000 is valid JSON (DynamoDB accepts it in strings; issue 15, item 10): this body
  // parses, and GetItem then misses its TableName
  const { res, json } = await post('DynamoDB_20120810.GetItem', '{"a":"\\u0000"}');
  assert.equal(res.status, 400);
  assert.equal(json.__type, 'com.amazon.coral.validate#ValidationException');
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

test('DynamoDB headers: Server, and CORS Access-Control-Expose-Headers with an Origin', async () => {
  const { res } = await post('DynamoDB_20120810.ListTables', '{}', { Origin: 'http://example.com/' });
  assert.equal(res.headers.get('server'), 'Server');
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assert.equal(res.headers.get('access-control-expose-headers'),
    'x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date');
  const pre = await fetch(endpoint + '/', { method: 'OPTIONS', headers: { Origin: 'http://example.com/' } });
  assert.equal(pre.status, 200);
  assert.equal(pre.headers.get('server'), 'Server');
  assert.ok(pre.headers.get('access-control-expose-headers'));
  assert.ok(pre.headers.get('access-control-max-age'));
  const plain = await post('DynamoDB_20120810.ListTables', '{}');
  assert.equal(plain.res.headers.get('access-control-expose-headers'), null);
});

test('gzip request bodies; other codings or broken gzip are HTTP 500', async () => {
  const body = '{"TableName":"no_such_table_gz","Key":{"pk":{"S":"a"}}}';
  const gz = zlib.gzipSync(Buffer.from(body));
  let r = await post('DynamoDB_20120810.GetItem', gz, { 'Content-Encoding': 'gzip' });
  assert.equal(r.res.status, 400);
  assert.equal(r.json.__type, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException');
  // two concatenated gzip members are one body
  const two = Buffer.concat([zlib.gzipSync(Buffer.from(body.slice(0, 10))), zlib.gzipSync(Buffer.from(body.slice(10)))]);
  r = await post('DynamoDB_20120810.GetItem', two, { 'Content-Encoding': 'gzip' });
  assert.equal(r.json.__type, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException');
  for (const [enc, b] of [['gzip', body], ['garbage', body], ['gzip', gz.subarray(0, gz.length - 1)],
    ['gzip', Buffer.concat([gz, Buffer.from('junk')])], ['gzip', '']]) {
    r = await post('DynamoDB_20120810.GetItem', b, { 'Content-Encoding': enc });
    assert.equal(r.res.status, 500, enc);
    assert.equal(r.json.__type, 'com.amazonaws.dynamodb.v20120810#InternalServerError');
  }
});

test('responses are compact JSON like DynamoDB\'s (no space after ":" or ","), strings untouched', async () => {
  const r = await post('DynamoDB_20120810.DescribeLimits', '{}');
  assert.equal(r.res.status, 200);
  assert.doesNotMatch(r.text, /[:,] /);
  assert.equal(r.json.AccountMaxReadCapacityUnits, 80000);
  const t = `compact_${process.pid}`;
  await post('DynamoDB_20120810.CreateTable', JSON.stringify({
    TableName: t, BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  }));
  const item = { pk: { S: 'a, b: "c" \\ d' }, l: { L: [{ N: '1' }, { S: ' x ' }] } };
  await post('DynamoDB_20120810.PutItem', JSON.stringify({ TableName: t, Item: item }));
  const g = await post('DynamoDB_20120810.GetItem', JSON.stringify({ TableName: t, Key: { pk: item.pk } }));
  assert.deepEqual(g.json.Item, item);
  assert.equal(g.text.length, JSON.stringify(g.json).length);
  const e = await post('DynamoDB_20120810.PutItem', JSON.stringify({
    TableName: t, Item: item, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  }));
  assert.equal(e.res.status, 400);
  assert.deepEqual(e.json.Item, item);
  assert.equal(e.text.length, JSON.stringify(e.json).length);
  await post('DynamoDB_20120810.DeleteTable', JSON.stringify({ TableName: t }));
});

// The order of checks on a raw request, as DynamoDB's (recorded by dynalite from the
// service): method/content type (404), JSON syntax (SerializationException), target
// (UnknownOperationException), then the operation.
test('a body that is not JSON is a SerializationException even without a target', async () => {
  for (const target of [undefined, 'Bogus', 'DynamoDB_20120810.Bogus']) {
    const { res, json } = await post(target, '{bad');
    assert.equal(res.status, 400);
    assert.equal(json.__type, 'com.amazon.coral.service#SerializationException', String(target));
  }
  // valid JSON (even not an object) without a known target: UnknownOperationException
  for (const body of ['{}', '[1]', '7']) {
    const { json } = await post(undefined, body);
    assert.equal(json.__type, 'com.amazon.coral.service#UnknownOperationException', body);
  }
});

test('the health answer is for GET / only; other paths and methods get 404', async () => {
  for (const [method, path] of [['GET', '/foo'], ['GET', '/healthz'], ['PUT', '/'], ['DELETE', '/']]) {
    const res = await fetch(endpoint + path, { method });
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(await res.text(), '<UnknownOperationException/>\n');
  }
});

test('the response Content-Type follows the request\'s', async () => {
  for (const ct of [JSON10, 'application/json']) {
    for (const [target, body, status] of [['DynamoDB_20120810.ListTables', '{}', 200],
      ['DynamoDB_20120810.GetItem', '{"TableName":"no_such_table_ct","Key":{"pk":{"S":"a"}}}', 400],
      ['DynamoDB_20120810.Bogus', '{}', 400], [undefined, '{bad', 400]]) {
      const { res } = await post(target, body, { 'Content-Type': ct });
      assert.equal(res.status, status);
      assert.equal(res.headers.get('content-type'), ct, `${ct} ${target}`);
    }
  }
});

test('error bodies name the message member as DynamoDB does (SerializationException: Message)', async () => {
  let r = await post('DynamoDB_20120810.GetItem', '{"TableName":"no_such_table_m","Key":{"pk":{"S":5}}}');
  assert.deepEqual(r.json, { __type: 'com.amazon.coral.service#SerializationException', Message: 'NUMBER_VALUE cannot be converted to String' });
  r = await post('DynamoDB_20120810.GetItem', '{"Key":{"pk":{"S":"a"}}}');
  assert.equal(r.json.__type, 'com.amazon.coral.validate#ValidationException');
  assert.equal(typeof r.json.message, 'string');
  assert.equal(r.json.Message, undefined);
  r = await post('DynamoDB_20120810.GetItem', '{"TableName":"no_such_table_m","Key":{"pk":{"S":"a"}}}');
  assert.equal(typeof r.json.message, 'string');
  assert.equal(r.json.Message, undefined);
});
