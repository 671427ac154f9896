// DynamoDB Streams through the gateway with the AWS SDK's Streams client
// (@aws-sdk/client-dynamodb-streams) pointed at the same endpoint: a poller
// that walks the shard lineage from TRIM_HORIZON as a Lambda event source
// does, for every view type; a TTL deletion; a transaction; a disable and
// re-enable cycle; the errors of a forged and an unknown iterator.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  CreateTableCommand, PutItemCommand, UpdateItemCommand, DeleteItemCommand, UpdateTableCommand,
  DescribeTableCommand, TransactWriteItemsCommand, UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBStreamsClient, ListStreamsCommand, DescribeStreamCommand, GetShardIteratorCommand, GetRecordsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { client, uniq, waitActive, dropTable, rejectsWith, endpoint } from './helpers.js';

const ddb = client();
const streams = new DynamoDBStreamsClient({
  endpoint, region: 'us-east-1', credentials: { accessKeyId: 'dev', secretAccessKey: 'dev' }, maxAttempts: 1,
});
const tables = [];

after(async () => {
  for (const t of tables) await dropTable(ddb, t);
});

// psql against the test database (run.sh exports PG*): null when unreachable
function sql(q) {
  try {
    return execFileSync('psql', ['-X', '-At', '-v', 'ON_ERROR_STOP=1', '-c', q],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return null;
  }
}

async function createTable(view, extra = {}) {
  const TableName = uniq('str');
  tables.push(TableName);
  const spec = view ? { StreamEnabled: true, StreamViewType: view } : undefined;
  const r = await ddb.send(new CreateTableCommand({
    TableName, BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'N' }],
    ...(spec ? { StreamSpecification: spec } : {}), ...extra,
  }));
  await waitActive(ddb, TableName);
  return { TableName, arn: r.TableDescription.LatestStreamArn };
}

// Every shard of a stream, DescribeStream page by page (Limit 2 to exercise paging).
async function allShards(StreamArn) {
  const shards = [];
  let ExclusiveStartShardId;
  let desc;
  do {
    desc = (await streams.send(new DescribeStreamCommand({ StreamArn, Limit: 2, ExclusiveStartShardId }))).StreamDescription;
    shards.push(...desc.Shards);
    ExclusiveStartShardId = desc.LastEvaluatedShardId;
  } while (ExclusiveStartShardId);
  return { desc, shards };
}

// A Lambda-style poller: shards in lineage order (a child after its parent),
// each read from TRIM_HORIZON until NextShardIterator is absent (closed) or a
// page comes back empty (open); records in the order read.
async function poll(StreamArn) {
  const { shards } = await allShards(StreamArn);
  const ids = new Set(shards.map((s) => s.ShardId));
  const done = new Set();
  const records = [];
  const closedSeen = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (const s of shards) {
      if (done.has(s.ShardId)) continue;
      if (s.ParentShardId && ids.has(s.ParentShardId) && !done.has(s.ParentShardId)) continue;
      let it = (await streams.send(new GetShardIteratorCommand({
        StreamArn, ShardId: s.ShardId, ShardIteratorType: 'TRIM_HORIZON',
      }))).ShardIterator;
      let last;
      for (;;) {
        const r = await streams.send(new GetRecordsCommand({ ShardIterator: it, Limit: 3 }));
        for (const rec of r.Records) {
          if (last !== undefined) assert.ok(BigInt(rec.dynamodb.SequenceNumber) > last, 'increasing within a shard');
          last = BigInt(rec.dynamodb.SequenceNumber);
          records.push(rec);
        }
        if (!r.NextShardIterator) {
          closedSeen.push(s.ShardId);
          break;
        }
        if (r.Records.length === 0) break;
        it = r.NextShardIterator;
      }
      done.add(s.ShardId);
      progress = true;
    }
  }
  return { records, shards, closedSeen };
}

const views = ['KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES'];

for (const view of views) {
  test(`INSERT, MODIFY, REMOVE with ${view}`, async () => {
    const { TableName, arn } = await createTable(view);
    assert.match(arn, /^arn:aws:dynamodb:[^:]+:\d{12}:table\/.+\/stream\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    const key = { pk: { S: 'a' }, sk: { N: '1' } };
    await ddb.send(new PutItemCommand({ TableName, Item: { ...key, v: { S: 'one' } } }));
    await ddb.send(new UpdateItemCommand({ TableName, Key: key, UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': { S: 'two' } } }));
    await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'b' }, sk: { N: '2' }, n: { N: '5' } } }));
    await ddb.send(new DeleteItemCommand({ TableName, Key: key }));
    await ddb.send(new DeleteItemCommand({ TableName, Key: key }));	// nothing to delete: no record

    const listed = await streams.send(new ListStreamsCommand({ TableName }));
    assert.deepEqual(listed.Streams.map((s) => s.StreamArn), [arn]);
    const { desc } = await allShards(arn);
    assert.equal(desc.StreamStatus, 'ENABLED');
    assert.equal(desc.StreamViewType, view);
    assert.equal(desc.TableName, TableName);
    assert.deepEqual(desc.KeySchema, [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }]);

    const { records } = await poll(arn);
    const ofA = records.filter((r) => r.dynamodb.Keys.pk.S === 'a');
    assert.deepEqual(ofA.map((r) => r.eventName), ['INSERT', 'MODIFY', 'REMOVE']);
    assert.equal(records.length, 4);
    for (const r of records) {
      assert.equal(r.eventSource, 'aws:dynamodb');
      assert.equal(r.eventVersion, '1.1');
      assert.match(r.eventID, /^[0-9a-f]{32}$/);
      assert.equal(typeof r.awsRegion, 'string');
      assert.equal(r.dynamodb.StreamViewType, view);
      assert.match(r.dynamodb.SequenceNumber, /^\d{21,40}$/);
      assert.ok(r.dynamodb.SizeBytes > 0);
      assert.ok(r.dynamodb.ApproximateCreationDateTime instanceof Date);
      assert.ok(Math.abs(r.dynamodb.ApproximateCreationDateTime.getTime() - Date.now()) < 600000);
    }
    const [ins, mod, rem] = ofA;
    const newImg = view === 'NEW_IMAGE' || view === 'NEW_AND_OLD_IMAGES';
    const oldImg = view === 'OLD_IMAGE' || view === 'NEW_AND_OLD_IMAGES';
    assert.deepEqual(ins.dynamodb.NewImage, newImg ? { ...key, v: { S: 'one' } } : undefined);
    assert.equal(ins.dynamodb.OldImage, undefined);
    assert.deepEqual(mod.dynamodb.NewImage, newImg ? { ...key, v: { S: 'two' } } : undefined);
    assert.deepEqual(mod.dynamodb.OldImage, oldImg ? { ...key, v: { S: 'one' } } : undefined);
    assert.equal(rem.dynamodb.NewImage, undefined);
    assert.deepEqual(rem.dynamodb.OldImage, oldImg ? { ...key, v: { S: 'two' } } : undefined);
  });
}

test('a TTL deletion: REMOVE with userIdentity Service dynamodb.amazonaws.com', async (t) => {
  const { TableName, arn } = await createTable('NEW_AND_OLD_IMAGES');
  await ddb.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { Enabled: true, AttributeName: 'exp' } }));
  const past = String(Math.floor(Date.now() / 1000) - 60);
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'ttl' }, sk: { N: '1' }, exp: { N: past } } }));
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'user' }, sk: { N: '1' } } }));
  await ddb.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'user' }, sk: { N: '1' } } }));
  if (sql(`SELECT dynindex.expire_items('${TableName}')`) !== '1') {
    t.skip('PostgreSQL is not reachable from the test (psql)');
    return;
  }
  const { records } = await poll(arn);
  const removes = records.filter((r) => r.eventName === 'REMOVE');
  const byTtl = removes.find((r) => r.dynamodb.Keys.pk.S === 'ttl');
  const byUser = removes.find((r) => r.dynamodb.Keys.pk.S === 'user');
  assert.deepEqual(byTtl.userIdentity, { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' });
  assert.deepEqual(byTtl.dynamodb.OldImage, { pk: { S: 'ttl' }, sk: { N: '1' }, exp: { N: past } });
  assert.equal(byUser.userIdentity, undefined);
});

test("a transaction's records: one per item, all or none", async () => {
  const { TableName, arn } = await createTable('NEW_IMAGE');
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'x' }, sk: { N: '1' } } }));
  await ddb.send(new TransactWriteItemsCommand({ TransactItems: [
    { Put: { TableName, Item: { pk: { S: 't1' }, sk: { N: '1' } } } },
    { Put: { TableName, Item: { pk: { S: 't2' }, sk: { N: '1' } } } },
    { Delete: { TableName, Key: { pk: { S: 'x' }, sk: { N: '1' } } } },
  ] }));
  // a cancelled transaction leaves no record
  await rejectsWith(() => ddb.send(new TransactWriteItemsCommand({ TransactItems: [
    { Put: { TableName, Item: { pk: { S: 't3' }, sk: { N: '1' } } } },
    { ConditionCheck: { TableName, Key: { pk: { S: 'x' }, sk: { N: '1' } }, ConditionExpression: 'attribute_exists(pk)' } },
  ] })), 'TransactionCanceledException');
  const { records } = await poll(arn);
  const got = records.map((r) => `${r.dynamodb.Keys.pk.S}:${r.eventName}`).sort();
  assert.deepEqual(got, ['t1:INSERT', 't2:INSERT', 'x:INSERT', 'x:REMOVE']);
});

test('disable and enable again: a new stream; the old one stays readable', async () => {
  const { TableName, arn: first } = await createTable('KEYS_ONLY');
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'before' }, sk: { N: '1' } } }));
  await ddb.send(new UpdateTableCommand({ TableName, StreamSpecification: { StreamEnabled: false } }));
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'between' }, sk: { N: '1' } } }));
  await new Promise((r) => setTimeout(r, 5));
  const up = await ddb.send(new UpdateTableCommand({ TableName,
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } }));
  const second = up.TableDescription.LatestStreamArn;
  assert.notEqual(second, first);
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'after' }, sk: { N: '1' } } }));
  const d = (await ddb.send(new DescribeTableCommand({ TableName }))).Table;
  assert.equal(d.LatestStreamArn, second);

  const listed = await streams.send(new ListStreamsCommand({ TableName, Limit: 1 }));
  assert.equal(listed.Streams.length, 1);
  assert.equal(listed.LastEvaluatedStreamArn, first);
  const rest = await streams.send(new ListStreamsCommand({ TableName, ExclusiveStartStreamArn: listed.LastEvaluatedStreamArn }));
  assert.deepEqual(rest.Streams.map((s) => s.StreamArn), [second]);

  const old = await poll(first);
  assert.deepEqual(old.records.map((r) => r.dynamodb.Keys.pk.S), ['before']);
  assert.equal(old.closedSeen.length, old.shards.length, 'every shard of the disabled stream is closed');
  assert.equal((await allShards(first)).desc.StreamStatus, 'DISABLED');
  for (const s of old.shards) assert.ok(s.SequenceNumberRange.EndingSequenceNumber);
  const now = await poll(second);
  assert.deepEqual(now.records.map((r) => r.dynamodb.Keys.pk.S), ['after']);
  assert.deepEqual(now.records[0].dynamodb.NewImage, { pk: { S: 'after' }, sk: { N: '1' } });
});

test('iterators: LATEST, AFTER_SEQUENCE_NUMBER; forged and unknown ones are refused', async () => {
  const { TableName, arn } = await createTable('NEW_AND_OLD_IMAGES');
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'p' }, sk: { N: '1' } } }));
  const { shards } = await allShards(arn);
  const first = (await poll(arn)).records[0];
  const shard = shards.find((s) => s.ShardId && true);
  const latest = await Promise.all(shards.map((s) => streams.send(new GetShardIteratorCommand({
    StreamArn: arn, ShardId: s.ShardId, ShardIteratorType: 'LATEST' }))));
  await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: 'p' }, sk: { N: '1' }, v: { N: '2' } } }));
  let after = [];
  for (const l of latest) after.push(...(await streams.send(new GetRecordsCommand({ ShardIterator: l.ShardIterator }))).Records);
  assert.deepEqual(after.map((r) => r.eventName), ['MODIFY']);
  // AFTER_SEQUENCE_NUMBER of the first record, in its shard
  const home = [];
  for (const s of shards) {
    try {
      const it = await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: s.ShardId,
        ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: first.dynamodb.SequenceNumber }));
      home.push(...(await streams.send(new GetRecordsCommand({ ShardIterator: it.ShardIterator }))).Records);
    } catch (err) {
      assert.equal(err.name, 'ValidationException');	// another shard's sequence number
    }
  }
  assert.deepEqual(home.map((r) => r.eventName), ['MODIFY']);
  const it = (await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard.ShardId,
    ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator;
  const forged = it.slice(0, -6) + (it.slice(-6, -5) === 'A' ? 'B' : 'A') + it.slice(-5);
  const e = await rejectsWith(() => streams.send(new GetRecordsCommand({ ShardIterator: forged })), 'ValidationException');
  assert.equal(e.message, 'Invalid ShardIterator');
  // another label: the milliseconds changed (the label's own may be 999: one table in a thousand)
  const other = arn.slice(-3) === '999' ? '998' : '999';
  await rejectsWith(() => streams.send(new DescribeStreamCommand({ StreamArn: `${arn.slice(0, -3)}${other}` })),
    'ResourceNotFoundException');
  await rejectsWith(() => streams.send(new GetShardIteratorCommand({ StreamArn: arn,
    ShardId: 'shardId-00000000000000000000-00000000', ShardIteratorType: 'LATEST' })), 'ResourceNotFoundException');
});

test('shard lineage: shards rotate between writes; the poller reads parents before children', async (t) => {
  const { TableName, arn } = await createTable('NEW_AND_OLD_IMAGES');
  const rotate = () => sql('SET dynindex.stream_shard_lifetime = 0; SELECT dynindex.maintain_streams() IS NOT NULL');
  const put = (pk, v) => ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: pk }, sk: { N: '1' }, v: { N: String(v) } } }));
  for (const k of ['a', 'b', 'c', 'd']) await put(k, 1);
  if (rotate() === null) {
    t.skip('PostgreSQL is not reachable from the test (psql)');
    return;
  }
  for (const k of ['a', 'b', 'c', 'd']) await put(k, 2);
  rotate();
  for (const k of ['a', 'c']) await put(k, 3);
  const { records, shards } = await poll(arn);
  const children = shards.filter((s) => s.ParentShardId);
  assert.ok(children.length >= 4, `children: ${children.length}`);
  for (const c of children) {
    const p = shards.find((s) => s.ShardId === c.ParentShardId);
    assert.ok(p.SequenceNumberRange.EndingSequenceNumber, 'a parent is closed');
    assert.ok(BigInt(c.SequenceNumberRange.StartingSequenceNumber) > BigInt(p.SequenceNumberRange.EndingSequenceNumber));
  }
  const per = {};
  for (const r of records) (per[r.dynamodb.Keys.pk.S] ??= []).push(r.dynamodb.NewImage.v.N);
  assert.deepEqual(per, { a: ['1', '2', '3'], b: ['1', '2'], c: ['1', '2', '3'], d: ['1', '2'] });
});
