// Shared by bench/gateway-load.mjs and bench/gateway-vs-dynalite.mjs:
// SDK clients with keep-alive, latency statistics, small helpers.
import http from 'node:http';
import { DynamoDBClient, CreateTableCommand, DescribeTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';

// One SDK client per simulated client, each with its own keep-alive agent.
// maxAttempts 1: no silent retries, every failure is counted.
export function makeClient(endpoint, { sockets = 1, credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' } } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ httpAgent: agent, connectionTimeout: 5000, requestTimeout: 30000 }),
  });
}

export function parseArgs(argv, defaults) {
  const o = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const k = a.slice(2);
    const d = defaults[k];
    if (typeof d === 'boolean') o[k] = true;
    else {
      const v = argv[++i];
      o[k] = typeof d === 'number' ? Number(v) : v;
    }
  }
  return o;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Per-operation latencies (ms) and errors.
export class Stats {
  constructor() { this.ops = new Map(); this.errors = new Map(); }
  rec(op, ms) {
    let a = this.ops.get(op);
    if (!a) this.ops.set(op, (a = []));
    a.push(ms);
  }
  err(op, e) {
    const k = `${op}: ${e?.name || 'Error'}: ${String(e?.message || e).slice(0, 120)}`;
    this.errors.set(k, (this.errors.get(k) || 0) + 1);
  }
  get errorCount() { let n = 0; for (const v of this.errors.values()) n += v; return n; }
  summary(seconds) {
    const rows = [];
    let total = 0;
    for (const [op, a] of [...this.ops.entries()].sort()) {
      const s = Float64Array.from(a).sort();
      total += s.length;
      rows.push({ op, n: s.length, ops: s.length / seconds, p50: pct(s, 0.5), p99: pct(s, 0.99), max: s[s.length - 1] });
    }
    return { rows, total, ops: total / seconds, errors: this.errorCount };
  }
}

export function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function fmtRows(rows) {
  const out = ['| operation | ops | ops/s | p50 ms | p99 ms | max ms |', '|---|---:|---:|---:|---:|---:|'];
  for (const r of rows) {
    out.push(`| ${r.op} | ${r.n} | ${r.ops.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} |`);
  }
  return out.join('\n');
}

// CPU time (user+system, seconds) of a process from /proc, or null.
import fs from 'node:fs';
export function procCpu(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(parts[11]) + Number(parts[12])) / 100; // utime, stime in clock ticks (100 Hz)
  } catch { return null; }
}

export async function createTable(ddb, def) {
  try {
    await ddb.send(new DeleteTableCommand({ TableName: def.TableName }));
    for (let i = 0; i < 100; i++) {
      await ddb.send(new DescribeTableCommand({ TableName: def.TableName }));
      await sleep(50);
    }
  } catch (e) {
    if (e.name !== 'ResourceNotFoundException') throw e;
  }
  await ddb.send(new CreateTableCommand(def));
  for (let i = 0; i < 200; i++) {
    const d = await ddb.send(new DescribeTableCommand({ TableName: def.TableName }));
    const gsis = d.Table.GlobalSecondaryIndexes || [];
    if (d.Table.TableStatus === 'ACTIVE' && gsis.every((g) => g.IndexStatus === 'ACTIVE')) return d.Table;
    await sleep(50);
  }
  throw new Error(`table ${def.TableName} did not become ACTIVE`);
}
