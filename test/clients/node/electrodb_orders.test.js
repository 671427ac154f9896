// ElectroDB single-table design with an Order entity:
//  - gsi1 "overloaded": Customer and Order share it (collection customerOrders)
//  - gsi2 "sparse": the pending-orders queue; only pending orders carry its keys
//  - gsi3 "multi-attribute": a native DynamoDB multi-attribute GSI key
//    (HASH region + warehouse, RANGE status + placedAt).  ElectroDB 3.9.3
//    models it as an index of `type: 'composite'` (attributes named directly,
//    no `field`, no concatenated key string: node_modules/electrodb/src/entity.js,
//    IndexTypes.composite), so this uses the native feature.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CreateTableCommand, DescribeTableCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, Service } from 'electrodb';
import { client, uniq, waitActive, dropTable, waitForIndexesSql } from './helpers.js';

const ddb = client();
const doc = DynamoDBDocumentClient.from(ddb);
const table = uniq('orders');
const S = (n) => ({ AttributeName: n, AttributeType: 'S' });

before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: table,
    AttributeDefinitions: [S('pk'), S('sk'), S('gsi1pk'), S('gsi1sk'), S('gsi2pk'), S('gsi2sk'),
      S('region'), S('warehouse'), S('status'), S('placedAt')],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: [
      { IndexName: 'gsi1', KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi1sk', KeyType: 'RANGE' }], Projection: { ProjectionType: 'ALL' } },
      { IndexName: 'gsi2', KeySchema: [{ AttributeName: 'gsi2pk', KeyType: 'HASH' }, { AttributeName: 'gsi2sk', KeyType: 'RANGE' }], Projection: { ProjectionType: 'ALL' } },
      {
        IndexName: 'gsi3',
        KeySchema: [
          { AttributeName: 'region', KeyType: 'HASH' }, { AttributeName: 'warehouse', KeyType: 'HASH' },
          { AttributeName: 'status', KeyType: 'RANGE' }, { AttributeName: 'placedAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, table);
});

after(async () => {
  await dropTable(ddb, table);
  ddb.destroy();
});

const model = { service: 'shop', version: '1' };
const Customer = new Entity({
  model: { ...model, entity: 'customer' },
  attributes: { customerId: { type: 'string', required: true }, name: { type: 'string' } },
  indexes: {
    primary: { pk: { field: 'pk', composite: ['customerId'] }, sk: { field: 'sk', composite: [] } },
    byCustomer: { index: 'gsi1', collection: 'customerOrders', pk: { field: 'gsi1pk', composite: ['customerId'] }, sk: { field: 'gsi1sk', composite: [] } },
  },
}, { client: doc, table });

const Order = new Entity({
  model: { ...model, entity: 'order' },
  attributes: {
    orderId: { type: 'string', required: true },
    customerId: { type: 'string', required: true },
    status: { type: ['pending', 'shipped', 'cancelled'], required: true, default: 'pending' },
    placedAt: { type: 'string', required: true },
    region: { type: 'string', required: true },
    warehouse: { type: 'string', required: true },
    total: { type: 'number' },
  },
  indexes: {
    primary: { pk: { field: 'pk', composite: ['orderId'] }, sk: { field: 'sk', composite: [] } },
    // overloaded: gsi1pk holds customer ids for both entities, gsi1sk differs per entity
    byCustomer: { index: 'gsi1', collection: 'customerOrders', pk: { field: 'gsi1pk', composite: ['customerId'] }, sk: { field: 'gsi1sk', composite: ['placedAt'] } },
    // sparse: only pending orders are written with gsi2 keys
    pending: {
      index: 'gsi2',
      condition: (attr) => attr.status === 'pending',
      pk: { field: 'gsi2pk', composite: [] },
      sk: { field: 'gsi2sk', composite: ['placedAt', 'orderId'] },
    },
    // native multi-attribute GSI key
    byWarehouse: {
      index: 'gsi3',
      type: 'composite',
      pk: { composite: ['region', 'warehouse'] },
      sk: { composite: ['status', 'placedAt'] },
    },
  },
}, { client: doc, table });

const shop = new Service({ Customer, Order });

const orders = [
  { orderId: 'o1', customerId: 'c1', placedAt: '2025-11-01', region: 'eu', warehouse: 'ber', total: 10 },
  { orderId: 'o2', customerId: 'c1', placedAt: '2025-11-02', region: 'eu', warehouse: 'ber', total: 20 },
  { orderId: 'o3', customerId: 'c2', placedAt: '2025-11-03', region: 'eu', warehouse: 'par', total: 30 },
  { orderId: 'o4', customerId: 'c2', placedAt: '2025-11-04', region: 'us', warehouse: 'ber', total: 40 },
  { orderId: 'o5', customerId: 'c1', placedAt: '2025-11-05', region: 'eu', warehouse: 'ber', total: 50 },
];

async function eventually(fn, check) { // GSIs are eventually consistent
  waitForIndexesSql(table);
  let r;
  for (let i = 0; i < 50; i++) {
    r = await fn();
    if (check(r)) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
  return r;
}

test('DescribeTable returns the multi-attribute GSI key schema as given', async () => {
  const d = await ddb.send(new DescribeTableCommand({ TableName: table }));
  const g = d.Table.GlobalSecondaryIndexes.find((x) => x.IndexName === 'gsi3');
  assert.deepEqual(g.KeySchema.map((k) => `${k.AttributeName}:${k.KeyType}`), ['region:HASH', 'warehouse:HASH', 'status:RANGE', 'placedAt:RANGE']);
});

test('Order: create, overloaded GSI collection with Customer', async () => {
  await Customer.create({ customerId: 'c1', name: 'Ada' }).go();
  await Customer.create({ customerId: 'c2', name: 'Bob' }).go();
  for (const o of orders) await Order.create(o).go();
  const { data } = await eventually(() => shop.collections.customerOrders({ customerId: 'c1' }).go(),
    (r) => r.data.Order?.length === 3 && r.data.Customer?.length === 1);
  assert.deepEqual(data.Customer.map((c) => c.name), ['Ada']);
  assert.deepEqual(data.Order.map((o) => o.orderId), ['o1', 'o2', 'o5']);
  const range = await Order.query.byCustomer({ customerId: 'c1' }).between({ placedAt: '2025-11-02' }, { placedAt: '2025-11-05' }).go();
  assert.deepEqual(range.data.map((o) => o.orderId), ['o2', 'o5']);
});

test('Order: sparse GSI as a pending queue (shipping removes an order from it)', async () => {
  let q = await eventually(() => Order.query.pending({}).go(), (r) => r.data.length === 5);
  assert.deepEqual(q.data.map((o) => o.orderId), ['o1', 'o2', 'o3', 'o4', 'o5']); // oldest first
  // ship two orders: ElectroDB's index condition drops their gsi2 keys
  await Order.patch({ orderId: 'o1' }).set({ status: 'shipped', placedAt: '2025-11-01' }).go();
  await Order.patch({ orderId: 'o3' }).set({ status: 'shipped', placedAt: '2025-11-03' }).go();
  const raw = await Order.get({ orderId: 'o1' }).go({ data: 'raw' });
  assert.equal(raw.data.Item.status, 'shipped');
  assert.equal(raw.data.Item.gsi2pk, undefined); // the sparse index keys are gone
  assert.equal(raw.data.Item.gsi2sk, undefined);
  q = await eventually(() => Order.query.pending({}).go(), (r) => r.data.length === 3);
  assert.deepEqual(q.data.map((o) => o.orderId), ['o2', 'o4', 'o5']);
  // the next order to work on
  const next = await Order.query.pending({}).go({ limit: 1 });
  assert.deepEqual(next.data.map((o) => o.orderId), ['o2']);
});

test('Order: native multi-attribute GSI (region + warehouse, then status + placedAt)', async () => {
  const all = await eventually(() => Order.query.byWarehouse({ region: 'eu', warehouse: 'ber' }).go(), (r) => r.data.length === 3);
  // sorted by status, then placedAt: pending o2, o5 before shipped o1
  assert.deepEqual(all.data.map((o) => `${o.status}/${o.orderId}`), ['pending/o2', 'pending/o5', 'shipped/o1']);
  const pending = await Order.query.byWarehouse({ region: 'eu', warehouse: 'ber', status: 'pending' }).go();
  assert.deepEqual(pending.data.map((o) => o.orderId), ['o2', 'o5']);
  const later = await Order.query.byWarehouse({ region: 'eu', warehouse: 'ber', status: 'pending' }).gt({ placedAt: '2025-11-03' }).go();
  assert.deepEqual(later.data.map((o) => o.orderId), ['o5']);
  const other = await Order.query.byWarehouse({ region: 'us', warehouse: 'ber' }).go();
  assert.deepEqual(other.data.map((o) => o.orderId), ['o4']);
  // the same index through the SDK: every HASH attribute with "="
  const r = await ddb.send(new QueryCommand({
    TableName: table, IndexName: 'gsi3',
    KeyConditionExpression: '#r = :r AND warehouse = :w AND #s = :s AND placedAt BETWEEN :a AND :b',
    ExpressionAttributeNames: { '#r': 'region', '#s': 'status' },
    ExpressionAttributeValues: { ':r': { S: 'eu' }, ':w': { S: 'ber' }, ':s': { S: 'pending' }, ':a': { S: '2025-11-01' }, ':b': { S: '2025-11-02' } },
  }));
  assert.deepEqual(r.Items.map((x) => x.orderId.S), ['o2']);
  // skipping status while constraining placedAt is DynamoDB's ValidationException
  await assert.rejects(() => ddb.send(new QueryCommand({
    TableName: table, IndexName: 'gsi3',
    KeyConditionExpression: '#r = :r AND warehouse = :w AND placedAt > :a',
    ExpressionAttributeNames: { '#r': 'region' },
    ExpressionAttributeValues: { ':r': { S: 'eu' }, ':w': { S: 'ber' }, ':a': { S: '2025' } },
  })), (e) => e.name === 'ValidationException' && /must have equality conditions/.test(e.message));
});
