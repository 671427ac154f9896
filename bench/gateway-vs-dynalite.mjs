#!/usr/bin/env node
// dynindex-gateway vs dynalite, same client program, same run.
// For each operation (PutItem, GetItem, Query) and each concurrency (1 and 8
// clients by default) it runs the case against dynindex, then against
// dynalite (interleaved, so background load hits both alike): warm-up, then a
// fixed duration; reports ops/s, p50/p99 and the ratios, plus the CPU used by
// the client, the gateway, its PostgreSQL backends and dynalite.
//
// Every simulated client is an SDK v3 DynamoDBClient with its own keep-alive
// agent (NodeHttpHandler, keepAlive, one socket); --threads spreads the
// clients over worker threads so the client can use more than one core.
//
//   node bench/gateway-vs-dynalite.mjs --dynindex http://127.0.0.1:8091 --dynalite http://127.0.0.1:8092 \
//       [--duration 15] [--warmup 3] [--rounds 1] [--clients 1,8] [--ops PutItem,GetItem,Query] [--threads 1] [--client sdk|raw|wrk] [--sign ID:SECRET]
//       [--gateway-pid P] [--dynalite-pid P] [--psql 'host=... port=...'] [--json out.json] [--md out.md]
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { PutItemCommand, GetItemCommand, QueryCommand, BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { makeClient, parseArgs, sleep, pct, createTable, procCpu } from './gateway-lib.mjs';

const T = 'gwbench';
const PARTS = 200; // partitions seeded with ITEMS items each
const ITEMS = 20;
const rnd = (n) => Math.floor(Math.random() * n);
const pad = (i) => String(i).padStart(3, '0');
const payload = 'v'.repeat(200);

const COMMANDS = {
  PutItem: () => new PutItemCommand({
    TableName: T,
    Item: { pk: { S: `w${rnd(100000)}` }, sk: { S: pad(rnd(ITEMS)) }, n: { N: String(rnd(1e9)) }, data: { S: payload } },
  }),
  GetItem: () => new GetItemCommand({ TableName: T, Key: { pk: { S: `p${rnd(PARTS)}` }, sk: { S: pad(rnd(ITEMS)) } } }),
  Query: () => new QueryCommand({
    TableName: T, KeyConditionExpression: 'pk = :p AND sk >= :s',
    ExpressionAttributeValues: { ':p': { S: `p${rnd(PARTS)}` }, ':s': { S: pad(5) } }, Limit: 10,
  }),
};

// ---- worker thread: run `clients` loops until told to stop ----
// --client raw: the same requests as plain keep-alive HTTP (body = the
// command's input as JSON, a fixed fake signature) without the SDK, to show
// how much of the time is the SDK's own.
function rawClient(endpoint) {
  const u = new URL(endpoint);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return {
    send(cmd) {
      const body = JSON.stringify(cmd.input);
      return new Promise((resolve, reject) => {
        const req = http.request({
          host: u.hostname, port: u.port, method: 'POST', path: '/', agent,
          headers: {
            'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `DynamoDB_20120810.${cmd.constructor.name.replace(/Command$/, '')}`,
            'X-Amz-Date': date, 'Content-Length': Buffer.byteLength(body),
            Authorization: `AWS4-HMAC-SHA256 Credential=bench/${date.slice(0, 8)}/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=${'0'.repeat(64)}`,
          },
        }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const j = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            if (res.statusCode !== 200) { const e = new Error(j.message); e.name = j.__type; reject(e); } else resolve(j);
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    destroy() { agent.destroy(); },
  };
}

if (!isMainThread) {
  const { endpoint, op, clients, ms, client } = workerData;
  const makeClient_ = client === 'raw' ? rawClient : makeClient;
  const lat = [];
  let errors = 0;
  let firstError = null;
  const until = Date.now() + ms;
  await Promise.all(Array.from({ length: clients }, async () => {
    const c = makeClient_(endpoint);
    while (Date.now() < until) {
      const cmd = COMMANDS[op]();
      const s = performance.now();
      try {
        const r = await c.send(cmd);
        if (op === 'GetItem' && !r.Item) throw new Error('GetItem found no item');
        if (op === 'Query' && (r.Count ?? r.Items?.length) !== 10) throw new Error(`Query returned ${r.Count} items`);
        lat.push(performance.now() - s);
      } catch (e) {
        errors++;
        firstError ??= `${e.name}: ${e.message}`;
      }
    }
    c.destroy();
  }));
  const a = Float64Array.from(lat);
  parentPort.postMessage({ lat: a, errors, firstError }, [a.buffer]);
  process.exit(0);
}

// ---- main thread ----
const opt = parseArgs(process.argv.slice(2), {
  dynindex: 'http://127.0.0.1:8091', dynalite: 'http://127.0.0.1:8092', duration: 15, warmup: 3,
  clients: '1,8', ops: 'PutItem,GetItem,Query', threads: 1, 'gateway-pid': 0, 'dynalite-pid': 0,
  psql: '', json: '', md: '', only: '', client: 'sdk', rounds: 1, sign: '', 'no-seed': false, http: '',
});
if (opt.sign && opt.client !== 'wrk') throw new Error('--sign needs --client wrk');
const credentials = opt.sign ? { accessKeyId: opt.sign.split(':')[0], secretAccessKey: opt.sign.split(':')[1] } : undefined;
// --http URL: dynindex_http (the endpoint inside PostgreSQL) as a third target
const targets = [['dynindex', opt.dynindex], ...(opt.http ? [['in-server', opt.http]] : []), ['dynalite', opt.dynalite]]
  .filter(([n]) => !opt.only || opt.only === n);
const clientCounts = String(opt.clients).split(',').map(Number);
const ops = opt.ops.split(',');

// --client wrk: wrk (a C load generator, one event loop per thread) sends
// the same requests from bench/wrk-dynamodb.lua, so the client costs the
// servers little CPU; its latency histogram becomes the latency list.
// --sign ID:SECRET (a gateway with authentication): wrk cannot sign, so
// bench/wrk-sign.mjs pre-signs 20,000 requests per endpoint and operation.
const signedFiles = new Map();
function signedFile(endpoint, op) {
  const k = `${endpoint} ${op}`;
  if (!signedFiles.has(k)) {
    const [key, secret] = opt.sign.split(':');
    const out = path.join(os.tmpdir(), `dynindex-wrk-${process.pid}-${signedFiles.size}.bin`);
    execFileSync('node', [new URL('./wrk-sign.mjs', import.meta.url).pathname, '--endpoint', endpoint,
      '--key', key, '--secret', secret, '--op', op, '--n', '20000', '--out', out]);
    signedFiles.set(k, out);
  }
  return signedFiles.get(k);
}
process.on('exit', () => { for (const f of signedFiles.values()) fs.rmSync(f, { force: true }); });

function runWrk(endpoint, op, clients, seconds) {
  const threads = Math.max(1, Math.min(opt.threads, clients));
  return new Promise((resolve, reject) => {
    const args = [`-t${threads}`, `-c${clients}`, `-d${Math.max(1, Math.round(seconds))}s`, '--timeout', '5s',
      '-s', new URL('./wrk-dynamodb.lua', import.meta.url).pathname, endpoint, '--', op,
      ...(opt.sign ? [signedFile(endpoint, op)] : [])];
    // sh reports wrk's CPU time (its waited-for children's cutime + cstime, in clock ticks)
    const p = spawn('sh', ['-c', 'wrk "$@" && echo "cpu $(cut -d" " -f16,17 /proc/$$/stat)"', 'sh', ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) { reject(new Error(`wrk exited with ${code}: ${out}`)); return; }
      const j = JSON.parse(line);
      const n = Object.values(j.hist).reduce((a, b) => a + b, 0);
      const lat = new Float64Array(n);
      let o = 0;
      for (const [us, cnt] of Object.entries(j.hist)) { lat.fill(Number(us) / 1000, o, o + cnt); o += cnt; }
      const cpu = (out.match(/^cpu (\d+) (\d+)$/m) || [0, 0, 0]).slice(1).map(Number);
      resolve([{ lat, errors: j.errors + j.socket_errors, firstError: j.first_error, cpu: (cpu[0] + cpu[1]) / 100 }]);
    });
  });
}

function runPhase(endpoint, op, clients, seconds) {
  if (opt.client === 'wrk') return runWrk(endpoint, op, clients, seconds);
  const nthreads = Math.max(1, Math.min(opt.threads, clients));
  const per = Array.from({ length: nthreads }, (_, i) => Math.floor(clients / nthreads) + (i < clients % nthreads ? 1 : 0));
  return Promise.all(per.map((n) => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { endpoint, op, clients: n, ms: seconds * 1000, client: opt.client } });
    w.once('message', resolve);
    w.once('error', reject);
  })));
}

// PostgreSQL backends of the gateway, or dynindex_http's workers (for their CPU time).
function backendPids(name) {
  if (!opt.psql) return [];
  const where = name === 'in-server' ? "backend_type = 'dynindex http'" : "application_name = 'dynindex-gateway'";
  try {
    const out = execFileSync('psql', ['-X', '-At', '-d', opt.psql, '-c',
      `SELECT pid FROM pg_stat_activity WHERE ${where}`], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).map(Number);
  } catch { return []; }
}
function sysCpu() { // busy and total jiffies of the whole machine
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function seed(name, endpoint) {
  const c = makeClient(endpoint, { sockets: 8, credentials });
  await createTable(c, {
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  const reqs = [];
  for (let p = 0; p < PARTS; p++) {
    for (let s = 0; s < ITEMS; s += 20) {
      reqs.push(Array.from({ length: Math.min(20, ITEMS - s) }, (_, i) => ({
        PutRequest: { Item: { pk: { S: `p${p}` }, sk: { S: pad(s + i) }, n: { N: String(i) }, data: { S: payload } } },
      })));
    }
  }
  for (let i = 0; i < reqs.length; i += 8) {
    await Promise.all(reqs.slice(i, i + 8).map(async (r) => {
      const out = await c.send(new BatchWriteItemCommand({ RequestItems: { [T]: r } }));
      if (out.UnprocessedItems && Object.keys(out.UnprocessedItems).length) throw new Error(`${name}: unprocessed items while seeding`);
    }));
  }
  c.destroy();
}

// --no-seed: the table is there from an earlier run against the same server
if (!opt['no-seed']) for (const [name, url] of targets) await seed(name, url);
console.log(`# ${targets.map(([n, u]) => `${n} ${u}`).join(', ')}; warm-up ${opt.warmup} s, ${opt.duration} s per case in ${opt.rounds} round(s); client ${opt.client}, client threads ${opt.threads}; ${PARTS * ITEMS} items seeded`);

// --rounds R: each case's duration is split into R rounds, the rounds of
// all cases interleaved (dynindex, dynalite, next case, ..., next round), so a
// burst of background load hits every case a little instead of one case a lot.
// ops/s is the median over the rounds; p50/p99 over all latencies pooled.
const results = [];
const acc = new Map(); // case key -> accumulated measurements
const medianOf = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const rounds = Math.max(1, opt.rounds);
for (let round = 0; round < rounds; round++) {
  for (const op of ops) {
    for (const clients of clientCounts) {
      for (const [name, url] of targets) {
        await runPhase(url, op, clients, round === 0 ? opt.warmup : Math.min(1, opt.warmup));
        const pids = name === 'dynalite' ? [] : backendPids(name);
        const serverPid = name === 'dynindex' ? opt['gateway-pid'] : opt['dynalite-pid'];
        const srv0 = serverPid ? procCpu(serverPid) : null;
        const pg0 = pids.map(procCpu);
        const cli0 = process.cpuUsage();
        const sys0 = sysCpu();
        const t0 = performance.now();
        const parts = await runPhase(url, op, clients, opt.duration / rounds);
        const secs = (performance.now() - t0) / 1000;
        const cli = process.cpuUsage(cli0);
        const sys1 = sysCpu();
        const k = `${op}/${clients}/${name}`;
        let c = acc.get(k);
        if (!c) acc.set(k, (c = { target: name, op, clients, lats: [], roundOps: [], secs: 0, n: 0, errors: 0, firstError: null, cli: 0, srv: 0, pg: 0, busy: 0, total: 0, hasSrv: !!serverPid, hasPg: false }));
        const n = parts.reduce((s, p) => s + p.lat.length, 0);
        for (const p of parts) c.lats.push(p.lat);
        c.roundOps.push(n / secs);
        c.secs += secs;
        c.n += n;
        c.errors += parts.reduce((s, p) => s + p.errors, 0);
        c.firstError ??= parts.find((p) => p.firstError)?.firstError ?? null;
        c.cli += (cli.user + cli.system) / 1e6 + parts.reduce((s, p) => s + (p.cpu ?? 0), 0);
        if (serverPid) c.srv += procCpu(serverPid) - srv0;
        if (pids.length) { c.hasPg = true; c.pg += pids.reduce((s, p, i) => s + ((procCpu(p) ?? pg0[i]) - pg0[i]), 0); }
        c.busy += sys1.busy - sys0.busy;
        c.total += sys1.total - sys0.total;
        if (rounds > 1) console.log(`  round ${round + 1}/${rounds} ${k}: ${(n / secs).toFixed(0)} ops/s`);
      }
    }
  }
}
for (const c of acc.values()) {
  const all = new Float64Array(c.n);
  let o = 0;
  for (const l of c.lats) { all.set(l, o); o += l.length; }
  all.sort();
  const r = {
    target: c.target, op: c.clients ? c.op : c.op, clients: c.clients, n: c.n, secs: c.secs, rounds: c.roundOps,
    ops: medianOf(c.roundOps), p50: pct(all, 0.5), p99: pct(all, 0.99), errors: c.errors, firstError: c.firstError,
    clientCpu: c.cli / c.secs, serverCpu: c.hasSrv ? c.srv / c.secs : null, pgCpu: c.hasPg ? c.pg / c.secs : null,
    machineBusy: c.busy / c.total,
  };
  // server CPU per operation (gateway + its backends, or dynalite): less sensitive to background load
  r.serverUsPerOp = c.hasSrv || c.hasPg ? ((c.srv + c.pg) / c.n) * 1e6 : null;
  r.clientUsPerOp = c.cli / c.n * 1e6;
  results.push(r);
  const name = r.target;
  console.log(`${r.op.padEnd(8)} c=${String(r.clients).padEnd(2)} ${name.padEnd(9)} ${r.ops.toFixed(0).padStart(6)} ops/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}` +
    `  cpu: client ${(r.clientCpu * 100).toFixed(0)}%` + (r.serverCpu != null ? ` ${name === 'dynindex' ? 'gateway' : 'dynalite'} ${(r.serverCpu * 100).toFixed(0)}%` : '') +
    (r.pgCpu != null ? ` postgres ${(r.pgCpu * 100).toFixed(0)}%` : '') +
    (r.serverUsPerOp != null ? ` (server ${r.serverUsPerOp.toFixed(0)} us/op, client ${r.clientUsPerOp.toFixed(0)} us/op)` : '') + ` machine ${(r.machineBusy * 100).toFixed(0)}% busy` +
    (r.firstError ? `  first error: ${r.firstError}` : ''));
}

// ---- summary ----
const withHttp = targets.some(([n]) => n === 'in-server');
const lines = ['| operation | clients | dynindex ops/s | p50 / p99 ms | server CPU us/op |' +
  (withHttp ? ' in-server ops/s | p50 / p99 ms | server CPU us/op |' : '') +
  ' dynalite ops/s | p50 / p99 ms | server CPU us/op | throughput ratio |' + (withHttp ? ' in-server ratio |' : ''),
  '|---|---:|---:|---:|---:|' + (withHttp ? '---:|---:|---:|' : '') + '---:|---:|---:|---:|' + (withHttp ? '---:|' : '')];
for (const op of ops) {
  for (const clients of clientCounts) {
    const find = (t) => results.find((r) => r.op === op && r.clients === clients && r.target === t);
    const [a, h, b] = [find('dynindex'), find('in-server'), find('dynalite')];
    const f = (r) => (r ? [r.ops.toFixed(0), `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)}`, r.serverUsPerOp != null ? r.serverUsPerOp.toFixed(0) : '-'] : ['-', '-', '-']);
    const ratio = (x) => (x && b ? (x.ops / b.ops).toFixed(1) + 'x' : '-');
    lines.push(`| ${op} | ${clients} | ${f(a).join(' | ')} |` + (withHttp ? ` ${f(h).join(' | ')} |` : '') +
      ` ${f(b).join(' | ')} | ${ratio(a)} |` + (withHttp ? ` ${ratio(h)} |` : ''));
  }
}
console.log('\n' + lines.join('\n'));
const errors = results.reduce((s, r) => s + r.errors, 0);
console.log(`errors: ${errors}`);
if (opt.md) fs.writeFileSync(opt.md, lines.join('\n') + '\n');
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ opt, results }, null, 1));
await sleep(10);
process.exit(errors ? 1 : 0);
