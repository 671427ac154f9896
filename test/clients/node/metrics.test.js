// The gateway's Prometheus endpoint (--metrics-port; run.sh starts the --dev
// gateway with one): counters move with the requests made, errors carry their
// DynamoDB type, the latency histogram is cumulative, pool and connection
// gauges are there, and a scrape works whether or not dynindex.table_metrics exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endpoint } from './helpers.js';

const murl = process.env.GATEWAY_METRICS_URL;
const skip = murl ? false : 'GATEWAY_METRICS_URL not set';

async function scrape() {
  const res = await fetch(murl);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    samples.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return { text, samples };
}

const post = (target, body) => fetch(endpoint + '/', {
  method: 'POST', body, headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': target },
});

test('metrics: requests, errors by type, latency histogram, pool and connections', { skip }, async () => {
  const before = await scrape();
  const get = (m, k) => m.samples.get(k) ?? 0;
  for (let i = 0; i < 3; i++) await (await post('DynamoDB_20120810.ListTables', '{}')).text();
  for (let i = 0; i < 2; i++) await (await post('DynamoDB_20120810.GetItem', '{"TableName":"no_such_table_metrics","Key":{"pk":{"S":"a"}}}')).text();
  await (await post('DynamoDB_20120810.GetItem', '{"TableName":"x"}')).text();
  const after = await scrape();
  const k = (op) => `dynindex_gateway_requests_total{operation="${op}"}`;
  assert.equal(get(after, k('ListTables')) - get(before, k('ListTables')), 3);
  assert.equal(get(after, k('GetItem')) - get(before, k('GetItem')), 3);
  const e = (t) => `dynindex_gateway_errors_total{operation="GetItem",error="${t}"}`;
  assert.equal(get(after, e('ResourceNotFoundException')) - get(before, e('ResourceNotFoundException')), 2);
  assert.equal(get(after, e('ValidationException')) - get(before, e('ValidationException')), 1);
  // histogram: cumulative buckets, +Inf equals _count
  const h = 'dynindex_gateway_request_duration_seconds';
  const inf = after.samples.get(`${h}_bucket{operation="ListTables",le="+Inf"}`);
  assert.equal(inf, after.samples.get(`${h}_count{operation="ListTables"}`));
  assert.ok(after.samples.get(`${h}_bucket{operation="ListTables",le="0.0005"}`) <= after.samples.get(`${h}_bucket{operation="ListTables",le="10"}`));
  assert.ok(after.samples.get(`${h}_sum{operation="ListTables"}`) > 0);
  for (const g of ['dynindex_gateway_requests_in_flight', 'dynindex_gateway_connections', 'dynindex_gateway_pool_size',
    'dynindex_gateway_pool_connections{state="ready"}', 'dynindex_gateway_pool_requests_queued',
    'dynindex_gateway_postgres_connects_total', 'dynindex_gateway_postgres_reconnects_total',
    'dynindex_gateway_requests_outcome_unknown_total']) {
    assert.ok(after.samples.has(g), g);
  }
  assert.ok(after.samples.get('dynindex_gateway_pool_connections{state="ready"}') >= 1);
  assert.ok(after.samples.get('dynindex_gateway_postgres_connects_total') >= 1);
  assert.ok([0, 1].includes(after.samples.get('dynindex_gateway_table_metrics_up')));
  assert.match(after.text, /# TYPE dynindex_gateway_request_duration_seconds histogram/);
});

test('metrics: only GET /metrics', { skip }, async () => {
  const res = await fetch(murl.replace(/\/metrics$/, '/other'));
  assert.equal(res.status, 404);
});

test('metrics: the per-table counters of dynindex.table_metrics, when the view exists', { skip }, async () => {
  const T = `metrics_${process.pid}_${Date.now().toString(36)}`;
  const r = await post('DynamoDB_20120810.CreateTable', JSON.stringify({
    TableName: T, BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  }));
  assert.equal(r.status, 200);
  try {
    await (await post('DynamoDB_20120810.PutItem', JSON.stringify({ TableName: T, Item: { pk: { S: 'a' } } }))).text();
    const m = await scrape();
    const up = m.samples.get('dynindex_gateway_table_metrics_up');
    if (up === 0) return;   // an extension without the view: nothing to export, the scrape still works
    assert.equal(up, 1);
    const rows = [...m.samples.keys()].filter((k) => k.startsWith('dynindex_table_') && k.includes(`table_name="${T}"`));
    assert.ok(rows.length > 0, 'samples of the table');
    // the table's own row has no index_name label; text columns are labels, numbers values
    assert.ok(rows.every((k) => /^dynindex_table_[a-z0-9_]+\{[^}]*\}$/.test(k)), rows.join('\n'));
    assert.match(m.text, /# TYPE dynindex_table_\w+ (counter|gauge)/);
  } finally {
    await (await post('DynamoDB_20120810.DeleteTable', JSON.stringify({ TableName: T }))).text();
  }
});
