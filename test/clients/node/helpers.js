// Shared helpers of the gateway client tests (run by ../run.sh).
import { DynamoDBClient, DescribeTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';

export const endpoint = process.env.GATEWAY_URL || 'http://127.0.0.1:8000';

// A client of the gateway under test: in --dev mode any credentials are
// accepted; run.sh's SigV4 pass sets GATEWAY_CLIENT_KEY_ID/_SECRET to a real key.
export const clientCredentials = {
  accessKeyId: process.env.GATEWAY_CLIENT_KEY_ID || 'dev',
  secretAccessKey: process.env.GATEWAY_CLIENT_SECRET || 'dev',
};

export function client(opts = {}) {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: clientCredentials,
    maxAttempts: 1,
    ...opts,
  });
}

export function uniq(prefix) {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

// true when the extension does not implement the operation yet
export function isUnimplemented(err) {
  return err && err.name === 'UnknownOperationException';
}

// Run fn; if the extension lacks the operation, skip the test (t.skip) and return undefined.
export async function orSkip(t, what, fn) {
  try {
    return await fn();
  } catch (err) {
    if (isUnimplemented(err)) {
      t.skip(`${what} is not implemented by the extension yet`);
      return undefined;
    }
    throw err;
  }
}

export async function waitActive(ddb, TableName) {
  for (let i = 0; i < 100; i++) {
    const d = await ddb.send(new DescribeTableCommand({ TableName }));
    if (d.Table.TableStatus === 'ACTIVE') return d.Table;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`table ${TableName} did not become ACTIVE`);
}

export async function dropTable(ddb, TableName) {
  try {
    await ddb.send(new DeleteTableCommand({ TableName }));
  } catch (err) {
    if (err.name !== 'ResourceNotFoundException') throw err;
  }
}

// Expect fn to reject with a service exception named name; returns the error.
export async function rejectsWith(fn, name) {
  try {
    await fn();
  } catch (err) {
    if (err.name !== name) {
      throw new Error(`expected ${name}, got ${err.name}: ${err.message}`);
    }
    return err;
  }
  throw new Error(`expected ${name}, but the call succeeded`);
}

// GSIs are eventually consistent: wait until the GSI reflects the writes made
// so far.  With PostgreSQL reachable (PG* variables, as run.sh has them) this
// is dynindex.wait_for_indexes(table); otherwise (or in addition, when
// `expect` is given) a short retry loop until a Query on the index returns
// `expect` items.
import { execFileSync } from 'node:child_process';
import { QueryCommand } from '@aws-sdk/client-dynamodb';

export function waitForIndexesSql(table) {
  try {
    const out = execFileSync('psql', ['-X', '-At', '-v', 'ON_ERROR_STOP=1', '-c',
      `SELECT dynindex.wait_for_indexes('${table.replace(/'/g, "''")}', '20 seconds')`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim() === 't';
  } catch {
    return false;
  }
}

export async function waitIndexes(ddb, TableName, IndexName, expect, query) {
  waitForIndexesSql(TableName);
  if (expect === undefined) return;
  let n = -1;
  for (let i = 0; i < 100; i++) {
    n = 0;
    let ExclusiveStartKey;
    do {
      const r = await ddb.send(query
        ? new QueryCommand({ TableName, IndexName, ...query, ExclusiveStartKey })
        : new (await import('@aws-sdk/client-dynamodb')).ScanCommand({ TableName, IndexName, ExclusiveStartKey }));
      n += r.Count;
      ExclusiveStartKey = r.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    if (n === expect) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`index ${IndexName} of ${TableName} holds ${n} items, expected ${expect}`);
}
