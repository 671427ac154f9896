#!/usr/bin/env node
// Load test of dynindex-gateway: N concurrent SDK clients run a mix of
// PutItem, GetItem, UpdateItem, DeleteItem, BatchWriteItem, BatchGetItem and
// Query (table and GSI) for a fixed time; reports ops/s, p50/p99 per
// operation and the error count (exit 1 if any error).
//
// With --abuse, misbehaving raw-socket clients run at the same time:
// malformed HTTP, oversized headers and bodies, invalid JSON, broken chunked
// encoding, pipelining, and 50+50 sockets that send half a request and either
// stay silent or vanish.  Afterwards the gateway must still answer at once, be
// alive (--gateway-pid) and get its threads back once --timeout passed.
//
//   node bench/gateway-load.mjs --endpoint http://127.0.0.1:8091 \
//        [--clients 8] [--duration 60] [--abuse] [--gateway-pid PID] [--gateway-timeout S]
import net from 'node:net';
import fs from 'node:fs';
import {
  PutItemCommand, GetItemCommand, UpdateItemCommand, DeleteItemCommand,
  BatchWriteItemCommand, BatchGetItemCommand, QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { makeClient, parseArgs, sleep, Stats, fmtRows, createTable, procCpu } from './gateway-lib.mjs';

const opt = parseArgs(process.argv.slice(2), {
  endpoint: 'http://127.0.0.1:8091', clients: 8, duration: 60, table: 'gwload',
  partitions: 50, items: 20, abuse: false, 'gateway-pid': 0, 'gateway-timeout': 0, json: '',
});
const url = new URL(opt.endpoint);
const T = opt.table;

// ---- table: pk/sk, a GSI (sparse: only items with a status) ----
const admin = makeClient(opt.endpoint);
await createTable(admin, {
  TableName: T,
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'status', AttributeType: 'S' }, { AttributeName: 'ts', AttributeType: 'N' },
  ],
  KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
  GlobalSecondaryIndexes: [{
    IndexName: 'byStatus',
    KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }, { AttributeName: 'ts', KeyType: 'RANGE' }],
    Projection: { ProjectionType: 'KEYS_ONLY' },
  }],
  BillingMode: 'PAY_PER_REQUEST',
});

const rnd = (n) => Math.floor(Math.random() * n);
const key = () => ({ pk: { S: `p${rnd(opt.partitions)}` }, sk: { S: `s${String(rnd(opt.items)).padStart(3, '0')}` } });
const item = () => ({
  ...key(), n: { N: String(rnd(1e6)) }, body: { S: 'x'.repeat(100 + rnd(400)) },
  tags: { SS: ['a', 'b', `t${rnd(10)}`] }, m: { M: { at: { N: String(Date.now()) }, ok: { BOOL: true } } },
  ...(Math.random() < 0.3 ? { status: { S: `st${rnd(4)}` }, ts: { N: String(Date.now()) } } : {}),
});
function distinctKeys(n) {
  const seen = new Map();
  while (seen.size < n) { const k = key(); seen.set(k.pk.S + '/' + k.sk.S, k); }
  return [...seen.values()];
}

// Weighted operation mix.
const MIX = [
  ['PutItem', 25, () => new PutItemCommand({ TableName: T, Item: item() })],
  ['GetItem', 25, () => new GetItemCommand({ TableName: T, Key: key(), ConsistentRead: Math.random() < 0.5 })],
  ['UpdateItem', 15, () => new UpdateItemCommand({
    TableName: T, Key: key(), UpdateExpression: 'SET #c = if_not_exists(#c, :z) + :one, #u = :now ADD tags :t',
    ExpressionAttributeNames: { '#c': 'count', '#u': 'updated' },
    ExpressionAttributeValues: { ':z': { N: '0' }, ':one': { N: '1' }, ':now': { N: String(Date.now()) }, ':t': { SS: ['u'] } },
    ReturnValues: 'UPDATED_NEW',
  })],
  ['DeleteItem', 5, () => new DeleteItemCommand({ TableName: T, Key: key() })],
  ['BatchWriteItem', 5, () => new BatchWriteItemCommand({
    RequestItems: { [T]: distinctKeys(10).map((k, i) => (i % 4 === 3 ? { DeleteRequest: { Key: k } } : { PutRequest: { Item: { ...item(), ...k } } })) },
  })],
  ['BatchGetItem', 10, () => new BatchGetItemCommand({ RequestItems: { [T]: { Keys: distinctKeys(10) } } })],
  ['Query', 10, () => new QueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p AND sk BETWEEN :a AND :b',
    ExpressionAttributeValues: { ':p': { S: `p${rnd(opt.partitions)}` }, ':a': { S: 's005' }, ':b': { S: 's015' } }, Limit: 10,
  })],
  ['Query(GSI)', 5, () => new QueryCommand({
    TableName: T, IndexName: 'byStatus', KeyConditionExpression: '#s = :s AND ts > :t',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':s': { S: `st${rnd(4)}` }, ':t': { N: String(Date.now() - 2000) } }, Limit: 20,
  })],
];
const totalW = MIX.reduce((s, m) => s + m[1], 0);
function pick() {
  let r = Math.random() * totalW;
  for (const m of MIX) { if ((r -= m[1]) < 0) return m; }
  return MIX[0];
}

// Probe Query (the extension may not have it yet): drop what is not implemented.
for (const name of ['Query', 'Query(GSI)']) {
  try { await admin.send(MIX.find((m) => m[0] === name)[2]()); } catch (e) {
    console.log(`# ${name} unavailable (${e.name}: ${e.message}); left out of the mix`);
    MIX.splice(MIX.findIndex((m) => m[0] === name), 1);
  }
}

// Seed every key once so reads find items.
{
  const all = [];
  for (let p = 0; p < opt.partitions; p++) for (let s = 0; s < opt.items; s++) all.push({ pk: { S: `p${p}` }, sk: { S: `s${String(s).padStart(3, '0')}` } });
  for (let i = 0; i < all.length; i += 25) {
    await admin.send(new BatchWriteItemCommand({ RequestItems: { [T]: all.slice(i, i + 25).map((k) => ({ PutRequest: { Item: { ...item(), ...k } } })) } }));
  }
}

// ---- abuse: raw sockets ----
const abuse = { sent: 0, answered: new Map(), closedWithoutAnswer: 0, unexpected: [] };
function note(kind, status) {
  const k = `${kind} -> ${status}`;
  abuse.answered.set(k, (abuse.answered.get(k) || 0) + 1);
}
// Send chunks (string/Buffer), collect the answer; resolve {status, text} or {status:'closed'}.
function rawExchange(chunks, { endAfter = false, waitMs = 5000, responses = 1 } = {}) {
  return new Promise((resolve) => {
    const s = net.connect({ host: url.hostname, port: Number(url.port) });
    let data = '';
    let done = false;
    const finish = (r) => { if (!done) { done = true; clearTimeout(timer); s.destroy(); resolve(r); } };
    const timer = setTimeout(() => finish({ status: 'timeout', text: data }), waitMs);
    s.on('connect', async () => {
      for (const c of chunks) { if (!s.destroyed) s.write(c); }
      if (endAfter) s.end();
    });
    s.on('data', (d) => {
      data += d.toString('latin1');
      // complete when `responses` answers (status line, headers, Content-Length body) arrived
      let off = 0;
      let status = null;
      for (let i = 0; i < responses; i++) {
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(data.slice(off));
        const hdrEnd = data.indexOf('\r\n\r\n', off);
        if (!m || hdrEnd < 0) return;
        const cl = /content-length: *(\d+)/i.exec(data.slice(off, hdrEnd));
        const end = hdrEnd + 4 + (cl ? Number(cl[1]) : 0);
        if (data.length < end) return;
        if (status === null || Number(m[1]) !== 200) status = Number(m[1]);
        off = end;
      }
      finish({ status, text: data });
    });
    s.on('error', () => finish({ status: data ? 'partial' : 'closed', text: data }));
    s.on('close', () => finish({ status: /^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ? Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)[1]) : 'closed', text: data }));
  });
}
const H = (target, body, extra = '') =>
  `POST / HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.${target}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const CASES = [
  // [name, chunks, options, acceptable results]
  ['garbage request line', ['HELLO THERE\r\n\r\n'], {}, [400, 'closed']],
  // random bytes, then a line end: without one (1 in 7 random buffers) the
  // gateway rightly keeps waiting for the request line until --timeout
  ['binary junk', [Buffer.concat([Buffer.from(Array.from({ length: 512 }, () => rnd(256))), Buffer.from('\r\n\r\n')])], {}, [400, 'closed']],
  ['header without colon', [`POST / HTTP/1.1\r\nHost: x\r\nThisIsNotAHeader\r\nContent-Length: 2\r\n\r\n{}`], {}, [400, 'closed']],
  ['100 KB header', [`POST / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100000)}\r\nContent-Length: 2\r\n\r\n{}`], {}, [431, 413, 400, 'closed']],
  ['invalid JSON', [H('GetItem', '{"TableName": "x", ')], {}, [400]],
  ['JSON not an object', [H('PutItem', '[1,2,3]')], {}, [400]],
  ['NUL in body', [H('PutItem', '{"TableName":"\u0000"}')], {}, [400]],
  ['deeply nested JSON', [H('PutItem', '{"a":' + '['.repeat(20000) + ']'.repeat(20000) + '}')], {}, [400]],
  ['unknown target', [H('DropDatabase', '{}')], {}, [400]],
  ['negative Content-Length', [`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}`], {}, [400, 'closed']],
  ['non-numeric Content-Length', [`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}`], {}, [400, 'closed']],
  ['bad chunk size', [`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n`], {}, [400, 'closed']],
  ['Content-Length 100 MB (refused at once)', [`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\nContent-Length: 104857600\r\n\r\n{"TableName":`], {}, [413]],
  ['pipelined pair (both answered)', [H('ListTables', '{}') + H('ListTables', '{"Limit":1}')], { responses: 2 }, [200]],
  ['HTTP/1.0, no Host', ['GET / HTTP/1.0\r\n\r\n'], {}, [200, 400]],
  ['request then hang up', [H('PutItem', JSON.stringify({ TableName: T, Item: { pk: { S: 'gone' }, sk: { S: 'x' } } }))], { endAfter: true, waitMs: 50 }, [200, 'timeout', 'closed']],
  ['half a body then hang up', [H('PutItem', '{"TableName":"' + T + '"}').replace(/Content-Length: \d+/, 'Content-Length: 5000')], { endAfter: true, waitMs: 2000 }, ['closed', 400, 'timeout']],
];

async function oversizedBody() {
  // 17 MB actually sent: the gateway must drop it and answer 413.
  const size = 17 * 1024 * 1024;
  const head = `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\nContent-Length: ${size}\r\n\r\n`;
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  return rawExchange([head, ...Array.from({ length: 17 }, () => chunk)], { waitMs: 20000 });
}

const lingering = [];
function halfRequests(n, vanish) {
  for (let i = 0; i < n; i++) {
    const s = net.connect({ host: url.hostname, port: Number(url.port) });
    s.on('error', () => {});
    s.on('connect', () => {
      s.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Tar`);
      if (vanish) setTimeout(() => s.destroy(), 200 + rnd(800));
    });
    if (!vanish) lingering.push(s);
  }
}

async function abuser(until) {
  halfRequests(50, false); // stay silent until the gateway's --timeout cuts them
  halfRequests(50, true); // vanish
  let round = 0;
  while (Date.now() < until - 3000) {
    for (const [name, chunks, o, ok] of CASES) {
      const r = await rawExchange(chunks, o);
      abuse.sent++;
      note(name, r.status);
      if (!ok.includes(r.status)) abuse.unexpected.push(`${name}: got ${r.status} ${r.text.slice(0, 200).replace(/\r\n/g, ' | ')}`);
    }
    if (round % 5 === 0) {
      const r = await oversizedBody();
      abuse.sent++;
      note('17 MB body sent', r.status);
      if (r.status !== 413) abuse.unexpected.push(`17 MB body: got ${r.status}`);
    }
    if (round % 3 === 1) halfRequests(20, true);
    round++;
    await sleep(200);
  }
}

function threads(pid) {
  try { return Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]); } catch { return null; }
}
function rssMb(pid) {
  try { return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024; } catch { return null; }
}

// ---- load ----
const stats = new Stats();
const gpid = opt['gateway-pid'];
const threads0 = gpid ? threads(gpid) : null;
const cpu0 = gpid ? procCpu(gpid) : null;
const clientCpu0 = process.cpuUsage();
console.log(`# ${opt.clients} clients, ${opt.duration} s, endpoint ${opt.endpoint}${opt.abuse ? ', with abusive clients' : ''}`);
console.log(`# mix: ${MIX.map((m) => `${m[0]} ${m[1]}`).join(', ')}`);
const t0 = Date.now();
const until = t0 + opt.duration * 1000;
let maxThreads = threads0;
const sampler = gpid ? setInterval(() => { const n = threads(gpid); if (n > maxThreads) maxThreads = n; }, 500) : null;
const workers = Array.from({ length: opt.clients }, async () => {
  const c = makeClient(opt.endpoint);
  while (Date.now() < until) {
    const [name, , mk] = pick();
    const cmd = mk();
    const s = performance.now();
    try {
      const r = await c.send(cmd);
      if (name === 'BatchWriteItem' && r.UnprocessedItems && Object.keys(r.UnprocessedItems).length) throw new Error('UnprocessedItems');
      if (name === 'BatchGetItem' && r.UnprocessedKeys && Object.keys(r.UnprocessedKeys).length) throw new Error('UnprocessedKeys');
      stats.rec(name, performance.now() - s);
    } catch (e) {
      stats.err(name, e);
    }
  }
  c.destroy();
});
const abuseRun = opt.abuse ? abuser(until) : Promise.resolve();
await Promise.all(workers);
await abuseRun;
const secs = (Date.now() - t0) / 1000;
const clientCpu = process.cpuUsage(clientCpu0);
if (sampler) clearInterval(sampler);

const sum = stats.summary(secs);
console.log(fmtRows(sum.rows));
console.log(`\ntotal: ${sum.total} ops in ${secs.toFixed(1)} s = ${sum.ops.toFixed(0)} ops/s; errors: ${sum.errors}`);
for (const [k, v] of stats.errors) console.log(`  error x${v}: ${k}`);
console.log(`client CPU: ${((clientCpu.user + clientCpu.system) / 1e6 / secs * 100).toFixed(0)}% of one core`);
if (gpid) console.log(`gateway CPU: ${(((procCpu(gpid) - cpu0) / secs) * 100).toFixed(0)}% of one core; threads: ${threads0} at start, ${maxThreads} at most; RSS ${rssMb(gpid)?.toFixed(1)} MB`);

let failed = sum.errors > 0;
if (opt.abuse) {
  console.log(`\nabusive requests: ${abuse.sent} (+${lingering.length} silent half-requests, vanishing ones every few rounds)`);
  for (const [k, v] of [...abuse.answered.entries()].sort()) console.log(`  ${k}: ${v}`);
  for (const u of abuse.unexpected.slice(0, 20)) console.log(`  UNEXPECTED ${u}`);
  if (abuse.unexpected.length) failed = true;
  // the gateway still answers at once while the silent sockets are open
  const s = performance.now();
  const h = await fetch(opt.endpoint + '/');
  console.log(`health after the run: ${h.status} in ${(performance.now() - s).toFixed(1)} ms`);
  if (h.status !== 200) failed = true;
  // the silent sockets must be cut by the gateway's timeout
  const gt = opt['gateway-timeout'];
  if (gt > 0) {
    const deadline = Date.now() + (gt + 5) * 1000;
    while (Date.now() < deadline && lingering.some((s) => !s.destroyed && s.readyState === 'open')) await sleep(250);
    const open = lingering.filter((s) => !s.destroyed && s.readyState === 'open').length;
    console.log(`silent half-requests still open ${gt + 5} s after the run: ${open} of ${lingering.length}`);
    if (open) failed = true;
  }
  for (const s of lingering) s.destroy();
  if (gpid) {
    await sleep(1500);
    const n = threads(gpid);
    console.log(`gateway alive: ${threads(gpid) !== null}; threads now ${n} (at start ${threads0})`);
    if (n === null || n > threads0 + 2) failed = true;
  }
}
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ opt, secs, ...sum, abuse: opt.abuse ? { sent: abuse.sent, answered: Object.fromEntries(abuse.answered), unexpected: abuse.unexpected } : undefined }, null, 1));
admin.destroy();
console.log(failed ? 'RESULT: FAIL' : 'RESULT: OK');
process.exit(failed ? 1 : 0);
