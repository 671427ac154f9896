// AWS SDK for JavaScript v3 against the gateway: items, tables and DynamoDB's
// exception classes.  Query, Scan, UpdateTable and transactions in detail:
// query_scan.test.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, DescribeTableCommand, ListTablesCommand, PutItemCommand,
  GetItemCommand, DeleteItemCommand, BatchWriteItemCommand, BatchGetItemCommand,
  UpdateItemCommand, QueryCommand, ScanCommand, DeleteTableCommand,
  ConditionalCheckFailedException, ResourceNotFoundException, ResourceInUseException,
  TagResourceCommand, UntagResourceCommand, ListTagsOfResourceCommand, DescribeEndpointsCommand, DescribeLimitsCommand,
  UpdateTimeToLiveCommand, DescribeTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient, PutCommand, GetCommand, DeleteCommand, UpdateCommand, QueryCommand as DocQueryCommand,
  ScanCommand as DocScanCommand, BatchWriteCommand, BatchGetCommand, TransactWriteCommand, TransactGetCommand,
} from '@aws-sdk/lib-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith, endpoint } from './helpers.js';

const ddb = client();
const T = uniq('sdk');

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

test('CreateTable of an existing table: ResourceInUseException', async () => {
  const err = await rejectsWith(() => ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  })), 'ResourceInUseException');
  assert.ok(err instanceof ResourceInUseException);
  assert.equal(err.$metadata.httpStatusCode, 400);
});

test('DescribeTable and ListTables', async () => {
  const d = await ddb.send(new DescribeTableCommand({ TableName: T }));
  assert.equal(d.Table.TableName, T);
  assert.deepEqual(d.Table.KeySchema, [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }]);
  const l = await ddb.send(new ListTablesCommand({}));
  assert.ok(l.TableNames.includes(T));
  assert.match(l.$metadata.requestId, /^[A-Z0-9]{52}$/);
});

test('PutItem, GetItem, DeleteItem round trip with every type', async () => {
  const Item = {
    pk: { S: 'p1' }, sk: { S: 's1' }, n: { N: '3.14' }, b: { B: new Uint8Array([1, 2, 255]) },
    t: { BOOL: true }, z: { NULL: true }, l: { L: [{ S: 'a' }, { N: '1' }] }, m: { M: { x: { S: 'y' } } },
    ss: { SS: ['a', 'b'] }, ns: { NS: ['1', '2'] },
  };
  await ddb.send(new PutItemCommand({ TableName: T, Item }));
  const g = await ddb.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'p1' }, sk: { S: 's1' } }, ConsistentRead: true }));
  assert.equal(g.Item.n.N, '3.14');
  assert.deepEqual([...g.Item.b.B], [1, 2, 255]);
  assert.deepEqual(g.Item.m, { M: { x: { S: 'y' } } });
  assert.deepEqual(new Set(g.Item.ss.SS), new Set(['a', 'b']));
  const del = await ddb.send(new DeleteItemCommand({ TableName: T, Key: { pk: { S: 'p1' }, sk: { S: 's1' } }, ReturnValues: 'ALL_OLD' }));
  assert.equal(del.Attributes.pk.S, 'p1');
  const g2 = await ddb.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'p1' }, sk: { S: 's1' } } }));
  assert.equal(g2.Item, undefined);
});

test('a failed condition: ConditionalCheckFailedException (with the old item when asked)', async () => {
  const Key = { pk: { S: 'c1' }, sk: { S: 'x' } };
  await ddb.send(new PutItemCommand({ TableName: T, Item: { ...Key, v: { N: '1' } } }));
  const err = await rejectsWith(() => ddb.send(new PutItemCommand({
    TableName: T, Item: { ...Key, v: { N: '2' } }, ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  })), 'ConditionalCheckFailedException');
  assert.ok(err instanceof ConditionalCheckFailedException);
  assert.equal(err.message, 'The conditional request failed');
  if (err.Item) assert.equal(err.Item.v.N, '1');
});

test('a missing table: ResourceNotFoundException', async () => {
  const err = await rejectsWith(() => ddb.send(new GetItemCommand({
    TableName: 'no_such_table_' + T, Key: { pk: { S: 'a' } },
  })), 'ResourceNotFoundException');
  assert.ok(err instanceof ResourceNotFoundException);
});

test('an invalid request: ValidationException', async () => {
  const err = await rejectsWith(() => ddb.send(new PutItemCommand({
    TableName: T, Item: { pk: { S: 'only-hash' } },
  })), 'ValidationException');
  assert.equal(err.$metadata.httpStatusCode, 400);
  assert.match(err.message, /sk|key/i);
});

test('BatchWriteItem and BatchGetItem', async () => {
  const puts = Array.from({ length: 10 }, (_, i) => ({
    PutRequest: { Item: { pk: { S: 'batch' }, sk: { S: `s${String(i).padStart(2, '0')}` }, i: { N: String(i) } } },
  }));
  const w = await ddb.send(new BatchWriteItemCommand({ RequestItems: { [T]: puts } }));
  assert.deepEqual(w.UnprocessedItems, {});
  const keys = puts.map((p) => ({ pk: p.PutRequest.Item.pk, sk: p.PutRequest.Item.sk }));
  const g = await ddb.send(new BatchGetItemCommand({ RequestItems: { [T]: { Keys: keys } } }));
  assert.equal(g.Responses[T].length, 10);
  const dels = keys.slice(0, 5).map((Key) => ({ DeleteRequest: { Key } }));
  await ddb.send(new BatchWriteItemCommand({ RequestItems: { [T]: dels } }));
  const g2 = await ddb.send(new BatchGetItemCommand({ RequestItems: { [T]: { Keys: keys } } }));
  assert.equal(g2.Responses[T].length, 5);
});

test('UpdateItem', async () => {
  const Key = { pk: { S: 'u1' }, sk: { S: 'x' } };
  const r = await ddb.send(new UpdateItemCommand({
    TableName: T, Key, UpdateExpression: 'SET #c = if_not_exists(#c, :z) + :one',
    ExpressionAttributeNames: { '#c': 'count' }, ExpressionAttributeValues: { ':z': { N: '0' }, ':one': { N: '1' } },
    ReturnValues: 'ALL_NEW',
  }));
  assert.equal(r.Attributes.count.N, '1');
});

test('Query and Scan', async () => {
  for (let i = 0; i < 5; i++) {
    await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'q' }, sk: { S: `k${i}` }, i: { N: String(i) } } }));
  }
  const q = await ddb.send(new QueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p AND begins_with(sk, :k)',
    ExpressionAttributeValues: { ':p': { S: 'q' }, ':k': { S: 'k' } }, ScanIndexForward: false, Limit: 3,
  }));
  assert.deepEqual(q.Items.map((x) => x.sk.S), ['k4', 'k3', 'k2']);
  assert.ok(q.LastEvaluatedKey);
  const s = await ddb.send(new ScanCommand({ TableName: T }));
  assert.ok(s.Count >= 5);
});

test('DocumentClient (lib-dynamodb) put/get/delete', async () => {
  const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } });
  await doc.send(new PutCommand({ TableName: T, Item: { pk: 'doc', sk: '1', name: 'Ada', tags: ['x', 'y'], n: 42 } }));
  const g = await doc.send(new GetCommand({ TableName: T, Key: { pk: 'doc', sk: '1' } }));
  assert.deepEqual(g.Item, { pk: 'doc', sk: '1', name: 'Ada', tags: ['x', 'y'], n: 42 });
  await doc.send(new DeleteCommand({ TableName: T, Key: { pk: 'doc', sk: '1' } }));
});

test('DeleteTable', async () => {
  const T2 = uniq('sdk_del');
  await ddb.send(new CreateTableCommand({
    TableName: T2, AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T2);
  await ddb.send(new DeleteTableCommand({ TableName: T2 }));
  await rejectsWith(() => ddb.send(new DescribeTableCommand({ TableName: T2 })), 'ResourceNotFoundException');
});

test('tags: TagResource, ListTagsOfResource, UntagResource (SDK), empty bodies on the wire', async () => {
  const { Table } = await ddb.send(new DescribeTableCommand({ TableName: T }));
  const arn = Table.TableArn;
  await ddb.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: 'team', Value: 'a' }, { Key: 'env', Value: 'dev' }] }));
  let r = await ddb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }));
  assert.deepEqual(r.Tags.map((t) => `${t.Key}=${t.Value}`).sort(), ['env=dev', 'team=a']);
  await ddb.send(new UntagResourceCommand({ ResourceArn: arn, TagKeys: ['env'] }));
  r = await ddb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }));
  assert.deepEqual(r.Tags, [{ Key: 'team', Value: 'a' }]);
  // DynamoDB answers TagResource/UntagResource with HTTP 200 and no body at all
  // (unsigned requests: checked in the --dev pass only)
  for (const [op, body] of process.env.GATEWAY_CLIENT_KEY_ID ? [] : [['TagResource', { ResourceArn: arn, Tags: [{ Key: 'k', Value: 'v' }] }], ['UntagResource', { ResourceArn: arn, TagKeys: ['k'] }]]) {
    const res = await fetch(endpoint + '/', {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `DynamoDB_20120810.${op}` },
    });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
  }
  await rejectsWith(() => ddb.send(new TagResourceCommand({ ResourceArn: arn.replace(T, `${T}_nope`), Tags: [{ Key: 'k', Value: 'v' }] })),
    'ResourceNotFoundException');
});

test('DescribeEndpoints names the gateway itself', async () => {
  const r = await ddb.send(new DescribeEndpointsCommand({}));
  assert.deepEqual(r.Endpoints, [{ Address: new URL(endpoint).host, CachePeriodInMinutes: 1440 }]);
});

test('lib-dynamodb: Update, Query, Scan, BatchWrite, BatchGet, TransactWrite, TransactGet with native values', async () => {
  const doc = DynamoDBDocumentClient.from(ddb);
  await doc.send(new BatchWriteCommand({ RequestItems: { [T]: [1, 2, 3].map((i) => ({ PutRequest: { Item: { pk: 'lib', sk: `s${i}`, n: i, set: new Set([`a${i}`]) } } })) } }));
  const u = await doc.send(new UpdateCommand({
    TableName: T, Key: { pk: 'lib', sk: 's1' }, UpdateExpression: 'SET n = n + :d, m = :m ADD #s :a',
    ExpressionAttributeNames: { '#s': 'set' }, ExpressionAttributeValues: { ':d': 10, ':m': { deep: [1, 'two', null] }, ':a': new Set(['b1']) },
    ReturnValues: 'ALL_NEW',
  }));
  assert.equal(u.Attributes.n, 11);
  assert.deepEqual(u.Attributes.m, { deep: [1, 'two', null] });
  assert.deepEqual(u.Attributes.set, new Set(['a1', 'b1']));
  const q = await doc.send(new DocQueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', ExpressionAttributeValues: { ':p': 'lib', ':s': 's' },
    ScanIndexForward: false,
  }));
  assert.deepEqual(q.Items.map((i) => i.sk), ['s3', 's2', 's1']);
  const sc = await doc.send(new DocScanCommand({ TableName: T, FilterExpression: 'pk = :p AND n > :n', ExpressionAttributeValues: { ':p': 'lib', ':n': 2 } }));
  assert.deepEqual(sc.Items.map((i) => i.sk).sort(), ['s1', 's3']);
  const bg = await doc.send(new BatchGetCommand({ RequestItems: { [T]: { Keys: [{ pk: 'lib', sk: 's2' }, { pk: 'lib', sk: 'nope' }] } } }));
  assert.deepEqual(bg.Responses[T].map((i) => i.n), [2]);
  await doc.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName: T, Item: { pk: 'lib', sk: 's4', n: 4 }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Update: { TableName: T, Key: { pk: 'lib', sk: 's2' }, UpdateExpression: 'SET n = :z', ExpressionAttributeValues: { ':z': 0 } } },
      { ConditionCheck: { TableName: T, Key: { pk: 'lib', sk: 's3' }, ConditionExpression: 'n = :three', ExpressionAttributeValues: { ':three': 3 } } },
      { Delete: { TableName: T, Key: { pk: 'lib', sk: 's1' } } },
    ],
  }));
  const tg = await doc.send(new TransactGetCommand({ TransactItems: ['s1', 's2', 's4'].map((sk) => ({ Get: { TableName: T, Key: { pk: 'lib', sk } } })) }));
  assert.deepEqual(tg.Responses.map((r) => r.Item?.n), [undefined, 0, 4]);
});

test('DescribeLimits', async () => {
  const r = await ddb.send(new DescribeLimitsCommand({}));
  assert.deepEqual([r.AccountMaxReadCapacityUnits, r.AccountMaxWriteCapacityUnits, r.TableMaxReadCapacityUnits, r.TableMaxWriteCapacityUnits],
    [80000, 80000, 40000, 40000]);
});

test('Time to Live: UpdateTimeToLive, DescribeTimeToLive', async () => {
  const u = await ddb.send(new UpdateTimeToLiveCommand({ TableName: T, TimeToLiveSpecification: { Enabled: true, AttributeName: 'expires' } }));
  assert.deepEqual(u.TimeToLiveSpecification, { Enabled: true, AttributeName: 'expires' });
  const d = await ddb.send(new DescribeTimeToLiveCommand({ TableName: T }));
  assert.deepEqual(d.TimeToLiveDescription, { TimeToLiveStatus: 'ENABLED', AttributeName: 'expires' });
  const err = await rejectsWith(() => ddb.send(new UpdateTimeToLiveCommand({ TableName: T, TimeToLiveSpecification: { Enabled: true, AttributeName: 'expires' } })), 'ValidationException');
  assert.equal(err.message, 'TimeToLive is already enabled');
  await ddb.send(new UpdateTimeToLiveCommand({ TableName: T, TimeToLiveSpecification: { Enabled: false, AttributeName: 'expires' } }));
  assert.equal((await ddb.send(new DescribeTimeToLiveCommand({ TableName: T }))).TimeToLiveDescription.TimeToLiveStatus, 'DISABLED');
});
