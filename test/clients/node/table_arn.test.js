// A table's ARN as TableName through the AWS SDK for JavaScript v3: every
// operation that names an existing table accepts the TableArn that
// DescribeTable returns (sql/16_table_arns shows the rules and messages).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, DescribeTableCommand, PutItemCommand, GetItemCommand, UpdateItemCommand,
  DeleteItemCommand, QueryCommand, ScanCommand, BatchWriteItemCommand, BatchGetItemCommand,
  TransactWriteItemsCommand, TransactGetItemsCommand, DescribeTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith } from './helpers.js';

const ddb = client();
const T = uniq('arn');
let arn;

before(async () => {
  const created = await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  arn = created.TableDescription.TableArn;
  await waitActive(ddb, T);
});

after(async () => {
  await dropTable(ddb, T);
  ddb.destroy();
});

test('item operations take the table ARN', async () => {
  const put = await ddb.send(new PutItemCommand({
    TableName: arn, Item: { pk: { S: 'a' }, n: { N: '1' } }, ReturnConsumedCapacity: 'TOTAL',
  }));
  assert.equal(put.ConsumedCapacity.TableName, arn);
  const got = await ddb.send(new GetItemCommand({ TableName: arn, Key: { pk: { S: 'a' } } }));
  assert.deepEqual(got.Item, { pk: { S: 'a' }, n: { N: '1' } });
  const upd = await ddb.send(new UpdateItemCommand({
    TableName: arn, Key: { pk: { S: 'a' } }, UpdateExpression: 'SET n = n + :one',
    ExpressionAttributeValues: { ':one': { N: '1' } }, ReturnValues: 'UPDATED_NEW',
  }));
  assert.deepEqual(upd.Attributes, { n: { N: '2' } });
  const q = await ddb.send(new QueryCommand({
    TableName: arn, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } },
  }));
  assert.equal(q.Count, 1);
  const s = await ddb.send(new ScanCommand({ TableName: arn }));
  assert.equal(s.Count, 1);
  const del = await ddb.send(new DeleteItemCommand({ TableName: arn, Key: { pk: { S: 'a' } }, ReturnValues: 'ALL_OLD' }));
  assert.deepEqual(del.Attributes, { pk: { S: 'a' }, n: { N: '2' } });
});

test('batches and transactions take the table ARN', async () => {
  const bw = await ddb.send(new BatchWriteItemCommand({
    RequestItems: { [arn]: [{ PutRequest: { Item: { pk: { S: 'b1' } } } }, { PutRequest: { Item: { pk: { S: 'b2' } } } }] },
  }));
  assert.deepEqual(bw.UnprocessedItems, {});
  const bg = await ddb.send(new BatchGetItemCommand({
    RequestItems: { [arn]: { Keys: [{ pk: { S: 'b1' } }, { pk: { S: 'b2' } }] } },
  }));
  assert.deepEqual(Object.keys(bg.Responses), [arn]);
  assert.equal(bg.Responses[arn].length, 2);
  await ddb.send(new TransactWriteItemsCommand({
    TransactItems: [
      { Put: { TableName: arn, Item: { pk: { S: 't1' } } } },
      { ConditionCheck: { TableName: arn, Key: { pk: { S: 'b1' } }, ConditionExpression: 'attribute_exists(pk)' } },
    ],
  }));
  const tg = await ddb.send(new TransactGetItemsCommand({
    TransactItems: [{ Get: { TableName: arn, Key: { pk: { S: 't1' } } } }],
  }));
  assert.deepEqual(tg.Responses[0].Item, { pk: { S: 't1' } });
});

test('table operations take the table ARN', async () => {
  const d = await ddb.send(new DescribeTableCommand({ TableName: arn }));
  assert.equal(d.Table.TableName, T);
  assert.equal(d.Table.TableArn, arn);
  const ttl = await ddb.send(new DescribeTimeToLiveCommand({ TableName: arn }));
  assert.equal(ttl.TimeToLiveDescription.TimeToLiveStatus, 'DISABLED');
});

test('an ARN of another account or of a missing table', async () => {
  const other = arn.replace(/:(\d{12}):table\//, ':111111111111:table/');
  const denied = await rejectsWith(() => ddb.send(new GetItemCommand({ TableName: other, Key: { pk: { S: 'a' } } })),
    'AccessDeniedException');
  assert.match(denied.message, /is not authorized to perform: dynamodb:GetItem on resource: /);
  await rejectsWith(() => ddb.send(new GetItemCommand({ TableName: `${arn}_gone`, Key: { pk: { S: 'a' } } })),
    'ResourceNotFoundException');
  await rejectsWith(() => ddb.send(new QueryCommand({
    TableName: `${arn}/index/i`, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } },
  })), 'ValidationException');
});
