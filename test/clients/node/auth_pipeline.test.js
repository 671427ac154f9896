// Role isolation under load: requests of three keys (the gateway's own role,
// a role without privileges, a role that may only list tables) interleaved,
// 240 at once, over the SigV4 gateway's 4 pooled connections, so that several
// requests of different roles are in flight on one PostgreSQL connection
// (libpq pipeline mode).  Each request is its own transaction with its own
// set_config('role', ..., true): every answer must be the one its own key's
// role gets alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand, PutItemCommand, GetItemCommand, ListTablesCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive } from './helpers.js';

const url = process.env.GATEWAY_AUTH_URL;
const keys = {
  admin: [process.env.GATEWAY_KEY_ID, process.env.GATEWAY_SECRET],
  none: [process.env.GATEWAY_NOACCESS_KEY_ID, process.env.GATEWAY_NOACCESS_SECRET],
  reader: [process.env.GATEWAY_READER_KEY_ID, process.env.GATEWAY_READER_SECRET],
};
const skip = !url || Object.values(keys).some(([k]) => !k) ? 'the SigV4 gateway and its three keys are not set' : false;

test('pipelined requests of different roles never see each other\'s role', { skip }, async () => {
  const c = Object.fromEntries(Object.entries(keys).map(([n, [k, s]]) => [n, client({ endpoint: url, credentials: { accessKeyId: k, secretAccessKey: s } })]));
  const T = uniq('pipe_roles');
  try {
    await c.admin.send(new CreateTableCommand({
      TableName: T, BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }));
    await waitActive(c.admin, T);
    await c.admin.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'a' }, v: { S: 'secret' } } }));
    const get = () => new GetItemCommand({ TableName: T, Key: { pk: { S: 'a' } } });
    const calls = [];
    for (let i = 0; i < 80; i++) {
      calls.push(c.admin.send(get()).then((r) => ['admin', r.Item?.v?.S], (e) => ['admin', e.name]));
      calls.push(c.none.send(get()).then((r) => ['none', r.Item?.v?.S], (e) => ['none', e.name]));
      calls.push((i % 2 ? c.reader.send(new ListTablesCommand({})).then((r) => ['reader-list', Array.isArray(r.TableNames)], (e) => ['reader-list', e.name])
        : c.reader.send(get()).then((r) => ['reader-get', r.Item?.v?.S], (e) => ['reader-get', e.name])));
    }
    const results = await Promise.all(calls);
    const tally = {};
    for (const [who, what] of results) tally[`${who}:${what}`] = (tally[`${who}:${what}`] || 0) + 1;
    assert.deepEqual(tally, {
      'admin:secret': 80, 'none:AccessDeniedException': 80,
      'reader-list:true': 40, 'reader-get:AccessDeniedException': 40,
    });
  } finally {
    await c.admin.send(new DeleteTableCommand({ TableName: T })).catch(() => {});
    for (const x of Object.values(c)) x.destroy();
  }
});
