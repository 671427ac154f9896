#!/usr/bin/env node
// Pre-signs DynamoDB requests for wrk (which cannot compute SigV4 itself):
// writes N complete HTTP requests, NUL-separated, the same bodies as
// bench/wrk-dynamodb.lua makes, each signed with SigV4 for the given key.
// wrk-dynamodb.lua sends them in a loop when given the file (signatures stay
// valid for the 15 minutes DynamoDB allows).
//
//   node bench/wrk-sign.mjs --endpoint http://127.0.0.1:8091 --key ID --secret S --op GetItem --n 20000 --out reqs.bin
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from './gateway-lib.mjs';

const opt = parseArgs(process.argv.slice(2), { endpoint: 'http://127.0.0.1:8091', key: '', secret: '', op: 'GetItem', n: 20000, out: '', region: 'us-east-1' });
const host = new URL(opt.endpoint).host;
const rnd = (n) => Math.floor(Math.random() * n);
const pad = (i) => String(i).padStart(3, '0');
const T = 'gwbench';
const bodies = {
  PutItem: () => ({ TableName: T, Item: { pk: { S: `w${rnd(100000)}` }, sk: { S: pad(rnd(20)) }, n: { N: String(rnd(1e9)) }, data: { S: 'v'.repeat(200) } } }),
  GetItem: () => ({ TableName: T, Key: { pk: { S: `p${rnd(200)}` }, sk: { S: pad(rnd(20)) } } }),
  Query: () => ({ TableName: T, KeyConditionExpression: 'pk = :p AND sk >= :s', ExpressionAttributeValues: { ':p': { S: `p${rnd(200)}` }, ':s': { S: '005' } }, Limit: 10 }),
};
const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
const hmac = (k, m) => crypto.createHmac('sha256', k).update(m).digest();
const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
const day = amzDate.slice(0, 8);
const scope = `${day}/${opt.region}/dynamodb/aws4_request`;
const kSig = hmac(hmac(hmac(hmac('AWS4' + opt.secret, day), opt.region), 'dynamodb'), 'aws4_request');
const target = `DynamoDB_20120810.${opt.op}`;
const out = [];
for (let i = 0; i < opt.n; i++) {
  const body = JSON.stringify(bodies[opt.op]());
  const h = { 'content-type': 'application/x-amz-json-1.0', host, 'x-amz-date': amzDate, 'x-amz-target': target };
  const names = Object.keys(h).sort();
  const creq = ['POST', '/', '', ...names.map((n) => `${n}:${h[n]}`), '', names.join(';'), sha(body)].join('\n');
  const sig = crypto.createHmac('sha256', kSig).update(['AWS4-HMAC-SHA256', amzDate, scope, sha(creq)].join('\n')).digest('hex');
  out.push(`POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${h['content-type']}\r\nX-Amz-Date: ${amzDate}\r\nX-Amz-Target: ${target}\r\n` +
    `Authorization: AWS4-HMAC-SHA256 Credential=${opt.key}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
fs.writeFileSync(opt.out, out.join('\0'));
