// Strings holding U+0000 through the gateway with the AWS SDK for JavaScript
// v3: DynamoDB accepts them in S, SS and map keys.  The gateway sends the
// request as JSON text to dynindex.api_text, so they round-trip exactly,
// sort first, count one byte, and come back in error messages too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, PutItemCommand, GetItemCommand, QueryCommand, UpdateItemCommand, BatchWriteItemCommand,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith } from './helpers.js';

const ddb = client();
const T = uniq('nul');

before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T);
});

after(async () => {
  await dropTable(ddb, T);
  ddb.destroy();
});

test('U+0000 in S, SS and map keys round-trips exactly', async () => {
  const item = {
    pk: { S: 'p' }, sk: { S: '\u0000start' },
    v: { S: 'mid\u0000dle\u0000' }, ss: { SS: ['\u0000', 'a\u0000'] },
    m: { M: { 'k\u0000': { S: '\u0000' }, '\ue000': { S: '\ue0000' } } },
  };
  await ddb.send(new PutItemCommand({ TableName: T, Item: item }));
  const got = await ddb.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'p' }, sk: { S: '\u0000start' } } }));
  assert.deepEqual(got.Item.v, item.v);
  assert.deepEqual([...got.Item.ss.SS].sort(), [...item.ss.SS].sort());
  assert.deepEqual(got.Item.m, item.m);
});

test('keys with U+0000 sort first; expressions see the real string', async () => {
  for (const sk of ['\u0000', 'a', 'a\u0000', '\u0001']) {
    await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'q' }, sk: { S: sk }, v: { S: `v${sk}` } } }));
  }
  const q = await ddb.send(new QueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'q' } },
  }));
  assert.deepEqual(q.Items.map((i) => i.sk.S), ['\u0000', '\u0001', 'a', 'a\u0000']);
  const f = await ddb.send(new QueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p AND begins_with(sk, :a)', FilterExpression: 'size(v) = :two',
    ExpressionAttributeValues: { ':p': { S: 'q' }, ':a': { S: 'a' }, ':two': { N: '3' } },
  }));
  assert.deepEqual(f.Items.map((i) => i.sk.S), ['a\u0000']);
  const u = await ddb.send(new UpdateItemCommand({
    TableName: T, Key: { pk: { S: 'q' }, sk: { S: '\u0000' } },
    UpdateExpression: 'SET #n = :v', ConditionExpression: 'v = :old',
    ExpressionAttributeNames: { '#n': 'x\u0000' }, ExpressionAttributeValues: { ':v': { S: '\u0000' }, ':old': { S: 'v\u0000' } },
    ReturnValues: 'UPDATED_NEW',
  }));
  assert.deepEqual(u.Attributes, { 'x\u0000': { S: '\u0000' } });
});

test('error messages carry U+0000 as DynamoDB would', async () => {
  // BatchWriteItem words it in DynamoDB's older validation layer: the members as sent
  const err = await rejectsWith(() => ddb.send(new BatchWriteItemCommand({
    RequestItems: { [T]: [{ PutRequest: { Item: { pk: { S: 'p' }, sk: { S: 'dup' }, ss: { SS: ['a\u0000', 'a\u0000'] } } } }] },
  })), 'ValidationException');
  assert.equal(err.message, 'One or more parameter values were invalid: Input collection [a\u0000, a\u0000] contains duplicates.');
  // PutItem in the current one: quoted (JSON-escaped), inside the envelope
  const put = await rejectsWith(() => ddb.send(new PutItemCommand({
    TableName: T, Item: { pk: { S: 'p' }, sk: { S: 'dup' }, ss: { SS: ['a\u0000', 'a\u0000'] } },
  })), 'ValidationException');
  assert.equal(put.message, '1 validation error detected: One or more parameter values were invalid: Input collection ["a\\u0000", "a\\u0000"] contains duplicates.');
});
