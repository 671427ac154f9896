// ElectroDB (single-table design) against the gateway.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, Service } from 'electrodb';
import { client, uniq, waitActive, dropTable, waitForIndexesSql } from './helpers.js';

const ddb = client();
const doc = DynamoDBDocumentClient.from(ddb);
const table = uniq('electro');

function tableDef(withGsi) {
  const def = {
    TableName: table,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    BillingMode: 'PAY_PER_REQUEST',
  };
  if (withGsi) {
    def.AttributeDefinitions.push({ AttributeName: 'gsi1pk', AttributeType: 'S' }, { AttributeName: 'gsi1sk', AttributeType: 'S' });
    def.GlobalSecondaryIndexes = [{
      IndexName: 'gsi1',
      KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi1sk', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'ALL' },
    }];
  }
  return def;
}

before(async () => {
  await ddb.send(new CreateTableCommand(tableDef(true)));
  await waitActive(ddb, table);
});

after(async () => {
  await dropTable(ddb, table);
  ddb.destroy();
});

const Task = () => new Entity({
  model: { entity: 'task', version: '1', service: 'tracker' },
  attributes: {
    project: { type: 'string', required: true },
    id: { type: 'string', required: true },
    owner: { type: 'string', required: true },
    title: { type: 'string' },
    points: { type: 'number', default: 1 },
    done: { type: 'boolean', default: false },
  },
  indexes: {
    byProject: { pk: { field: 'pk', composite: ['project'] }, sk: { field: 'sk', composite: ['id'] } },
    byOwner: { index: 'gsi1', pk: { field: 'gsi1pk', composite: ['owner'] }, sk: { field: 'gsi1sk', composite: ['project', 'id'] } },
  },
}, { client: doc, table });

test('ElectroDB put / get / delete', async () => {
  const tasks = Task();
  await tasks.put({ project: 'apollo', id: 't1', owner: 'ada', title: 'land' }).go();
  const { data } = await tasks.get({ project: 'apollo', id: 't1' }).go();
  assert.equal(data.title, 'land');
  assert.equal(data.points, 1);
  assert.equal(data.done, false);
  await tasks.delete({ project: 'apollo', id: 't1' }).go();
  const again = await tasks.get({ project: 'apollo', id: 't1' }).go();
  assert.equal(again.data, null);
});

test('ElectroDB create of an existing item fails with ConditionalCheckFailed', async () => {
  const tasks = Task();
  await tasks.create({ project: 'apollo', id: 'c1', owner: 'ada' }).go();
  await assert.rejects(() => tasks.create({ project: 'apollo', id: 'c1', owner: 'ada' }).go(),
    (err) => /conditional request failed/i.test(err.message) || /ConditionalCheckFailed/.test(String(err.cause?.name)));
});

test('ElectroDB batch put and batch get', async () => {
  const tasks = Task();
  const items = Array.from({ length: 8 }, (_, i) => ({ project: 'gemini', id: `b${i}`, owner: 'bob', points: i }));
  const r = await tasks.put(items).go();
  assert.deepEqual(r.unprocessed, []);
  const g = await tasks.get(items.map(({ project, id }) => ({ project, id }))).go();
  assert.equal(g.data.length, 8);
});

test('ElectroDB update and query on the table', async () => {
  const tasks = Task();
  await tasks.put({ project: 'mercury', id: 'u1', owner: 'cy', points: 2 }).go();
  await tasks.update({ project: 'mercury', id: 'u1' }).add({ points: 3 }).set({ done: true }).go();
  const { data } = await tasks.get({ project: 'mercury', id: 'u1' }).go();
  assert.equal(data.points, 5);
  assert.equal(data.done, true);
  const q = await tasks.query.byProject({ project: 'mercury' }).go();
  assert.equal(q.data.length, 1);
});

test('ElectroDB query on a GSI (overloaded keys, composite sort key)', async () => {
  const tasks = Task();
  await tasks.put([
    { project: 'p1', id: 'g1', owner: 'dora' }, { project: 'p2', id: 'g2', owner: 'dora' },
    { project: 'p1', id: 'g3', owner: 'eve' },
  ]).go();
  let data;
  waitForIndexesSql(table);
  for (let i = 0; i < 50; i++) { // GSIs are eventually consistent
    ({ data } = await tasks.query.byOwner({ owner: 'dora' }).go());
    if (data.length === 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(data.map((x) => x.id).sort(), ['g1', 'g2']);
  const one = await tasks.query.byOwner({ owner: 'dora', project: 'p2' }).go();
  assert.deepEqual(one.data.map((x) => x.id), ['g2']);
});

test('ElectroDB service with two entities in one table (collections)', async () => {
  const User = new Entity({
    model: { entity: 'user', version: '1', service: 'tracker' },
    attributes: { project: { type: 'string', required: true }, name: { type: 'string', required: true } },
    indexes: { byProject: { collection: 'team', pk: { field: 'pk', composite: ['project'] }, sk: { field: 'sk', composite: ['name'] } } },
  }, { client: doc, table });
  const Job = new Entity({
    model: { entity: 'job', version: '1', service: 'tracker' },
    attributes: { project: { type: 'string', required: true }, jid: { type: 'string', required: true } },
    indexes: { byProject: { collection: 'team', pk: { field: 'pk', composite: ['project'] }, sk: { field: 'sk', composite: ['jid'] } } },
  }, { client: doc, table });
  const svc = new Service({ User, Job });
  await User.put({ project: 'x', name: 'ann' }).go();
  await Job.put({ project: 'x', jid: 'j1' }).go();
  const { data } = await svc.collections.team({ project: 'x' }).go();
  assert.equal(data.User.length, 1);
  assert.equal(data.Job.length, 1);
});
