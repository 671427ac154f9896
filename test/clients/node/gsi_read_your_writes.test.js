// GSIs you can read your writes from (beyond DynamoDB, docs/gsi.md): with the
// header X-Dynindex-Gsi-Consistency: read-your-writes a Query or Scan of a GSI
// waits until the writes committed before it are applied, through the AWS SDK
// for JavaScript v3 (a middleware adds the header).  Runs through the gateway
// and through dynindex_http (run.sh); the endpoint-wide default through a
// gateway started with --gsi-read-your-writes (GATEWAY_RYW_URL).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  CreateTableCommand, PutItemCommand, UpdateItemCommand, DeleteItemCommand, QueryCommand, ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith } from './helpers.js';

// A client whose requests all carry the header (value), or none (undefined).
function withConsistency(value, opts = {}) {
  const c = client(opts);
  if (value !== undefined) {
    c.middlewareStack.add((next) => async (args) => {
      args.request.headers['x-dynindex-gsi-consistency'] = value;
      return next(args);
    }, { step: 'build', name: 'gsiConsistency' });
  }
  return c;
}

const ddb = withConsistency(undefined);
const ryw = withConsistency('read-your-writes');
const T = uniq('ryw');

before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'g', AttributeType: 'S' },
      { AttributeName: 'n', AttributeType: 'N' },
    ],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [{
      IndexName: 'byG',
      KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }, { AttributeName: 'n', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'ALL' },
    }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T);
});

after(async () => {
  await dropTable(ddb, T);
  ddb.destroy();
  ryw.destroy();
});

const byG = (g) => ({
  TableName: T, IndexName: 'byG', KeyConditionExpression: 'g = :g',
  ExpressionAttributeValues: { ':g': { S: g } },
});

test('every write is seen by the next Query or Scan of the GSI with the header', async () => {
  let misses = 0;
  for (let i = 1; i <= 100; i++) {
    await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: `k${i}` }, g: { S: 'x' }, n: { N: String(i) } } }));
    const q = await ryw.send(new QueryCommand({ ...byG('x'), Select: 'COUNT' }));
    if (q.Count !== i) misses++;
    if (i % 10 === 0) {
      // moved to the front of the index, then out of it (sparse), seen by Scan
      await ddb.send(new UpdateItemCommand({
        TableName: T, Key: { pk: { S: `k${i}` } }, UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: String(-i) } },
      }));
      const first = await ryw.send(new QueryCommand({ ...byG('x'), Limit: 1 }));
      if (first.Items[0].n.N !== String(-i)) misses++;
      await ddb.send(new UpdateItemCommand({ TableName: T, Key: { pk: { S: `k${i}` } }, UpdateExpression: 'REMOVE g' }));
      const s = await ryw.send(new ScanCommand({ TableName: T, IndexName: 'byG', Select: 'COUNT' }));
      if (s.Count !== i - 1) misses++;
      await ddb.send(new UpdateItemCommand({
        TableName: T, Key: { pk: { S: `k${i}` } }, UpdateExpression: 'SET g = :g',
        ExpressionAttributeValues: { ':g': { S: 'x' } },
      }));
    }
  }
  for (let i = 1; i <= 20; i++) {
    await ddb.send(new DeleteItemCommand({ TableName: T, Key: { pk: { S: `k${i}` } } }));
    const q = await ryw.send(new QueryCommand({ ...byG('x'), Select: 'COUNT' }));
    if (q.Count !== 100 - i) misses++;
  }
  assert.equal(misses, 0);
});

test('the header is checked, and DynamoDB rules stand under it', async () => {
  const bad = withConsistency('strong');
  try {
    const err = await rejectsWith(() => bad.send(new QueryCommand(byG('x'))), 'ValidationException');
    assert.equal(err.message, 'The value of header X-Dynindex-Gsi-Consistency must be read-your-writes or eventual');
    assert.equal(err.$metadata.httpStatusCode, 400);
  } finally {
    bad.destroy();
  }
  await rejectsWith(() => ryw.send(new QueryCommand({ ...byG('x'), ConsistentRead: true })), 'ValidationException');
  // "eventual" (DynamoDB's behaviour) and no header: answered, without waiting
  const ev = withConsistency('eventual');
  try {
    const q = await ev.send(new QueryCommand({ ...byG('x'), Select: 'COUNT' }));
    assert.equal(typeof q.Count, 'number');
  } finally {
    ev.destroy();
  }
});

// A change that cannot be applied (a trigger makes every write into the GSI's
// storage fail; needs psql with the PG* variables run.sh sets): the bounded
// wait (dynindex.gsi_read_your_writes_timeout, 5 s) ends with
// ServiceUnavailable, HTTP 503, which the SDKs retry.
// psql with the PG* variables run.sh sets
const psql = (sql) => execFileSync('psql', ['-X', '-At', '-v', 'ON_ERROR_STOP=1', '-c', sql],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

// While fn runs, every write into the GSI's storage fails: changes stay queued.
async function whileStuck(fn) {
  const storage = psql(`SELECT storage FROM dynindex.indexes WHERE table_name = '${T}' AND index_name = 'byG'`);
  const f = `public.${T}_fail`;
  psql(`CREATE FUNCTION ${f}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$`);
  psql(`CREATE TRIGGER fail BEFORE INSERT ON ${storage} FOR EACH ROW EXECUTE FUNCTION ${f}()`);
  try {
    await fn();
  } finally {
    psql(`DROP TRIGGER fail ON ${storage}`);
    psql(`DROP FUNCTION ${f}()`);
  }
}

test('a GSI that does not catch up: ServiceUnavailable (503)', async (t) => {
  try {
    psql('SELECT 1');
  } catch {
    t.skip('psql cannot reach the database');
    return;
  }
  await whileStuck(async () => {
    await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'stuck' }, g: { S: 'y' }, n: { N: '1' } } }));
    const err = await rejectsWith(() => ryw.send(new QueryCommand(byG('y'))), 'ServiceUnavailable');
    assert.equal(err.$metadata.httpStatusCode, 503);
    // without the header: DynamoDB's eventual consistency, answered at once
    const q = await ddb.send(new QueryCommand(byG('y')));
    assert.equal(q.Count, 0);
  });
  const q = await ryw.send(new QueryCommand(byG('y')));
  assert.equal(q.Count, 1);
});

// --gsi-read-your-writes: every GSI read waits, without the header; the
// header "eventual" asks for DynamoDB's behaviour on such an endpoint.
test('the endpoint-wide default (--gsi-read-your-writes) and the header that overrides it', async (t) => {
  const url = process.env.GATEWAY_RYW_URL;
  if (!url) {
    t.skip('no gateway with --gsi-read-your-writes (GATEWAY_RYW_URL)');
    return;
  }
  const all = withConsistency(undefined, { endpoint: url });
  const ev = withConsistency('eventual', { endpoint: url });
  try {
    let misses = 0;
    for (let i = 1; i <= 50; i++) {
      await all.send(new PutItemCommand({ TableName: T, Item: { pk: { S: `d${i}` }, g: { S: 'z' }, n: { N: String(i) } } }));
      const q = await all.send(new QueryCommand({ ...byG('z'), Select: 'COUNT' }));
      if (q.Count !== i) misses++;
    }
    assert.equal(misses, 0);
    try {
      psql('SELECT 1');
    } catch {
      return;				// the stuck GSI needs psql
    }
    await whileStuck(async () => {
      await all.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'stuck2' }, g: { S: 'w' }, n: { N: '1' } } }));
      const q = await ev.send(new QueryCommand(byG('w')));
      assert.equal(q.Count, 0);
      await rejectsWith(() => all.send(new QueryCommand(byG('w'))), 'ServiceUnavailable');
    });
  } finally {
    all.destroy();
    ev.destroy();
  }
});
