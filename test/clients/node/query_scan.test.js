// Query, Scan, UpdateTable (a new GSI) and transactions through the AWS SDK
// for JavaScript v3, with DynamoDB's exception classes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, DescribeTableCommand, UpdateTableCommand, PutItemCommand, QueryCommand, ScanCommand,
  BatchWriteItemCommand, TransactWriteItemsCommand, TransactGetItemsCommand, UpdateItemCommand,
  paginateQuery, paginateScan,
  DynamoDBServiceException, TransactionCanceledException, ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith, waitIndexes } from './helpers.js';

const ddb = client();
const T = uniq('qs');

// 3 partitions x 30 items; every third item has a "status" (GSI "byStatus"),
// an LSI on "score".
before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'N' },
      { AttributeName: 'score', AttributeType: 'N' }, { AttributeName: 'status', AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    LocalSecondaryIndexes: [{
      IndexName: 'byScore',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'score', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    }],
    GlobalSecondaryIndexes: [{
      IndexName: 'byStatus',
      KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['color'] },
    }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T);
  const puts = [];
  for (const p of ['a', 'b', 'c']) {
    for (let i = 0; i < 30; i++) {
      puts.push({
        PutRequest: {
          Item: {
            pk: { S: p }, sk: { N: String(i) }, score: { N: String((i * 7) % 30) },
            color: { S: i % 2 ? 'red' : 'blue' }, name: { S: `item-${p}-${i}` },
            ...(i % 3 === 0 ? { status: { S: 'open' } } : {}),
          },
        },
      });
    }
  }
  for (let i = 0; i < puts.length; i += 25) {
    await ddb.send(new BatchWriteItemCommand({ RequestItems: { [T]: puts.slice(i, i + 25) } }));
  }
});

after(async () => {
  await dropTable(ddb, T);
  ddb.destroy();
});

const q = (input) => ddb.send(new QueryCommand({ TableName: T, ...input }));

test('Query: key conditions (=, <, BETWEEN, begins_with) and order', async () => {
  let r = await q({ KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } } });
  assert.equal(r.Count, 30);
  assert.deepEqual(r.Items.slice(0, 3).map((x) => x.sk.N), ['0', '1', '2']); // numeric order
  r = await q({ KeyConditionExpression: 'pk = :p AND sk < :n', ExpressionAttributeValues: { ':p': { S: 'a' }, ':n': { N: '3' } }, ScanIndexForward: false });
  assert.deepEqual(r.Items.map((x) => x.sk.N), ['2', '1', '0']);
  r = await q({ KeyConditionExpression: '#k BETWEEN :lo AND :hi AND pk = :p', ExpressionAttributeNames: { '#k': 'sk' }, ExpressionAttributeValues: { ':p': { S: 'b' }, ':lo': { N: '10' }, ':hi': { N: '12' } } });
  assert.deepEqual(r.Items.map((x) => x.sk.N), ['10', '11', '12']);
  r = await q({ KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'nope' } } });
  assert.equal(r.Count, 0);
  assert.deepEqual(r.Items, []);
});

test('Query: FilterExpression (Count vs ScannedCount), ProjectionExpression, Select COUNT', async () => {
  const r = await q({
    KeyConditionExpression: 'pk = :p', FilterExpression: 'color = :c AND score >= :n',
    ExpressionAttributeValues: { ':p': { S: 'c' }, ':c': { S: 'red' }, ':n': { N: '20' } },
    ProjectionExpression: 'sk, #n', ExpressionAttributeNames: { '#n': 'name' },
  });
  assert.equal(r.ScannedCount, 30);
  // red: odd i; score (7i mod 30) >= 20: i in 3, 9, 13, 19, 23, 29, ... (computed)
  const want = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 2 && (i * 7) % 30 >= 20);
  assert.equal(r.Count, want.length);
  assert.deepEqual(r.Items.map((x) => Number(x.sk.N)), want);
  assert.deepEqual(Object.keys(r.Items[0]).sort(), ['name', 'sk']);
  const c = await q({ KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'c' } }, Select: 'COUNT' });
  assert.equal(c.Count, 30);
  assert.equal(c.Items, undefined);
});

test('Query: paging with Limit / ExclusiveStartKey and the SDK paginator', async () => {
  const seen = [];
  let ExclusiveStartKey;
  let pages = 0;
  do {
    const r = await q({ KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } }, Limit: 7, ExclusiveStartKey });
    seen.push(...r.Items.map((x) => Number(x.sk.N)));
    ExclusiveStartKey = r.LastEvaluatedKey;
    pages++;
  } while (ExclusiveStartKey);
  assert.deepEqual(seen, Array.from({ length: 30 }, (_, i) => i));
  assert.ok(pages >= 5);
  let n = 0;
  for await (const page of paginateQuery({ client: ddb, pageSize: 4 }, {
    TableName: T, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'b' } },
  })) n += page.Count;
  assert.equal(n, 30);
});

test('Query: LSI (strongly consistent) and GSI (IndexName), LastEvaluatedKey carries index keys', async () => {
  const l = await q({ IndexName: 'byScore', KeyConditionExpression: 'pk = :p AND score < :s', ExpressionAttributeValues: { ':p': { S: 'a' }, ':s': { N: '3' } }, ConsistentRead: true });
  assert.deepEqual(l.Items.map((x) => Number(x.score.N)), [0, 1, 2]);
  assert.deepEqual(Object.keys(l.Items[0]).sort(), ['pk', 'score', 'sk']); // KEYS_ONLY
  await waitIndexes(ddb, T, 'byStatus', 30);
  const g = await q({ IndexName: 'byStatus', KeyConditionExpression: '#s = :o AND sk >= :n', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':o': { S: 'open' }, ':n': { N: '27' } }, Limit: 2 });
  assert.equal(g.Count, 2);
  assert.deepEqual(Object.keys(g.LastEvaluatedKey).sort(), ['pk', 'sk', 'status']);
  assert.deepEqual(Object.keys(g.Items[0]).sort(), ['color', 'pk', 'sk', 'status']); // INCLUDE color
  await rejectsWith(() => q({ IndexName: 'byStatus', ConsistentRead: true, KeyConditionExpression: '#s = :o', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':o': { S: 'open' } } }), 'ValidationException');
});

test('Query errors are ValidationException / ResourceNotFoundException', async () => {
  const e = await rejectsWith(() => q({ KeyConditionExpression: 'sk = :n', ExpressionAttributeValues: { ':n': { N: '1' } } }), 'ValidationException');
  assert.ok(e instanceof DynamoDBServiceException); // the SDK models no ValidationException class: name + base class
  assert.equal(e.message, 'Query condition missed key schema element: pk');
  await rejectsWith(() => q({ KeyConditionExpression: 'pk = :p OR pk = :q', ExpressionAttributeValues: { ':p': { S: 'a' }, ':q': { S: 'b' } } }), 'ValidationException');
  await rejectsWith(() => q({ KeyConditionExpression: 'pk = :p', FilterExpression: 'sk > :n', ExpressionAttributeValues: { ':p': { S: 'a' }, ':n': { N: '1' } } }), 'ValidationException');
  const nf = await rejectsWith(() => ddb.send(new QueryCommand({ TableName: `${T}_missing`, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } } })), 'ResourceNotFoundException');
  assert.ok(nf instanceof ResourceNotFoundException);
});

test('Scan: FilterExpression, paging, parallel scan (segments are disjoint and complete)', async () => {
  const s = await ddb.send(new ScanCommand({ TableName: T, FilterExpression: 'color = :c', ExpressionAttributeValues: { ':c': { S: 'blue' } } }));
  assert.equal(s.ScannedCount, 90);
  assert.equal(s.Count, 45);
  let n = 0;
  for await (const page of paginateScan({ client: ddb, pageSize: 16 }, { TableName: T })) n += page.Count;
  assert.equal(n, 90);
  const TotalSegments = 4;
  const keys = [];
  const counts = await Promise.all(Array.from({ length: TotalSegments }, async (_, Segment) => {
    let c = 0;
    for await (const page of paginateScan({ client: ddb, pageSize: 10 }, { TableName: T, Segment, TotalSegments })) {
      c += page.Count;
      keys.push(...page.Items.map((x) => `${x.pk.S}/${x.sk.N}`));
    }
    return c;
  }));
  assert.equal(keys.length, 90);
  assert.equal(new Set(keys).size, 90);
  assert.ok(counts.filter((c) => c > 0).length >= 2, `segments: ${counts}`);
  await rejectsWith(() => ddb.send(new ScanCommand({ TableName: T, Segment: 4, TotalSegments: 4 })), 'ValidationException');
  const gs = await ddb.send(new ScanCommand({ TableName: T, IndexName: 'byStatus' }));
  assert.equal(gs.Count, 30);
});

test('UpdateTable: create a GSI on a table with items, wait for ACTIVE, query it', async () => {
  const d = await ddb.send(new UpdateTableCommand({
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'color', AttributeType: 'S' }, { AttributeName: 'name', AttributeType: 'S' }],
    GlobalSecondaryIndexUpdates: [{
      Create: {
        IndexName: 'byColor',
        KeySchema: [{ AttributeName: 'color', KeyType: 'HASH' }, { AttributeName: 'name', KeyType: 'RANGE' }],
        Projection: { ProjectionType: 'ALL' },
      },
    }],
  }));
  const created = d.TableDescription.GlobalSecondaryIndexes.find((g) => g.IndexName === 'byColor');
  assert.ok(['CREATING', 'ACTIVE'].includes(created.IndexStatus), created.IndexStatus);
  let status;
  for (let i = 0; i < 200; i++) {
    const t = await ddb.send(new DescribeTableCommand({ TableName: T }));
    status = t.Table.GlobalSecondaryIndexes.find((g) => g.IndexName === 'byColor').IndexStatus;
    if (status === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status, 'ACTIVE');
  await waitIndexes(ddb, T, 'byColor', 45, { KeyConditionExpression: 'color = :c', ExpressionAttributeValues: { ':c': { S: 'red' } } });
  const r = await q({ IndexName: 'byColor', KeyConditionExpression: 'color = :c AND begins_with(#n, :b)', ExpressionAttributeNames: { '#n': 'name' }, ExpressionAttributeValues: { ':c': { S: 'red' }, ':b': { S: 'item-b-' } } });
  assert.equal(r.Count, 15);
  // a second index change while one is in flight, or a duplicate name: errors
  await rejectsWith(() => ddb.send(new UpdateTableCommand({
    TableName: T, AttributeDefinitions: [{ AttributeName: 'color', AttributeType: 'S' }],
    GlobalSecondaryIndexUpdates: [{ Create: { IndexName: 'byColor', KeySchema: [{ AttributeName: 'color', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } } }],
  })), 'ValidationException');
});

test('TransactWriteItems / TransactGetItems; a failed condition is TransactionCanceledException', async () => {
  await ddb.send(new TransactWriteItemsCommand({
    TransactItems: [
      { Put: { TableName: T, Item: { pk: { S: 'tx' }, sk: { N: '1' }, v: { N: '1' } } } },
      { Update: { TableName: T, Key: { pk: { S: 'tx' }, sk: { N: '2' } }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': { N: '2' } } } },
    ],
  }));
  const g = await ddb.send(new TransactGetItemsCommand({
    TransactItems: [{ Get: { TableName: T, Key: { pk: { S: 'tx' }, sk: { N: '1' } } } }, { Get: { TableName: T, Key: { pk: { S: 'tx' }, sk: { N: '2' } } } }],
  }));
  assert.deepEqual(g.Responses.map((x) => x.Item.v.N), ['1', '2']);
  const e = await rejectsWith(() => ddb.send(new TransactWriteItemsCommand({
    TransactItems: [
      { Put: { TableName: T, Item: { pk: { S: 'tx' }, sk: { N: '3' } } } },
      { ConditionCheck: { TableName: T, Key: { pk: { S: 'tx' }, sk: { N: '1' } }, ConditionExpression: 'v = :x', ExpressionAttributeValues: { ':x': { N: '9' } } } },
    ],
  })), 'TransactionCanceledException');
  assert.ok(e instanceof TransactionCanceledException);
  assert.deepEqual(e.CancellationReasons.map((r) => r.Code), ['None', 'ConditionalCheckFailed']);
  const none = await ddb.send(new UpdateItemCommand({ TableName: T, Key: { pk: { S: 'tx' }, sk: { N: '3' } }, UpdateExpression: 'SET w = :w', ExpressionAttributeValues: { ':w': { N: '1' } }, ConditionExpression: 'attribute_exists(pk)' })).catch((x) => x);
  assert.equal(none.name, 'ConditionalCheckFailedException'); // the cancelled Put did not happen
  await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'tx' }, sk: { N: '4' } } }));
});
