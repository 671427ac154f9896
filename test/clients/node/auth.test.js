// SigV4 authentication and role mapping (gateway started without --dev).
// run.sh sets GATEWAY_AUTH_URL and the keys; without them these tests skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { ListTablesCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { client, rejectsWith } from './helpers.js';

const url = process.env.GATEWAY_AUTH_URL;
const keyId = process.env.GATEWAY_KEY_ID;
const secret = process.env.GATEWAY_SECRET;
const skip = !url || !keyId || !secret ? 'GATEWAY_AUTH_URL / GATEWAY_KEY_ID / GATEWAY_SECRET not set' : false;

function authClient(accessKeyId, secretAccessKey, extra = {}) {
  return client({ endpoint: url, credentials: { accessKeyId, secretAccessKey }, ...extra });
}

// An independent SigV4 signer (node:crypto), for hand-made requests.
function sign({ body, date, key = keyId, sec = secret, region = 'us-east-1', target = 'DynamoDB_20120810.ListTables', extraHeaders = {} }) {
  const u = new URL(url);
  const amzDate = date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers = { 'content-type': 'application/x-amz-json-1.0', host: u.host, 'x-amz-date': amzDate, 'x-amz-target': target, ...extraHeaders };
  const names = Object.keys(headers).sort();
  const payloadHash = crypto.createHash('sha256').update(body).digest('hex');
  const creq = ['POST', '/', '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), headers['x-amz-content-sha256'] || payloadHash].join('\n');
  const scope = `${day}/${region}/dynamodb/aws4_request`;
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, crypto.createHash('sha256').update(creq).digest('hex')].join('\n');
  const h = (k, m) => crypto.createHmac('sha256', k).update(m).digest();
  const kSig = h(h(h(h('AWS4' + sec, day), region), 'dynamodb'), 'aws4_request');
  const signature = crypto.createHmac('sha256', kSig).update(sts).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${key}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  delete headers.host;
  return headers;
}

async function raw(headers, body) {
  const res = await fetch(url + '/', { method: 'POST', headers, body });
  return { status: res.status, json: await res.json() };
}

test('a correctly signed request (AWS SDK) works', { skip }, async () => {
  const c = authClient(keyId, secret);
  const r = await c.send(new ListTablesCommand({}));
  assert.ok(Array.isArray(r.TableNames));
  c.destroy();
});

test('a request signed by an independent SigV4 implementation works', { skip }, async () => {
  const body = '{}';
  const r = await raw(sign({ body, date: new Date() }), body);
  assert.equal(r.status, 200, JSON.stringify(r.json));
});

test('a wrong secret: InvalidSignatureException', { skip }, async () => {
  const c = authClient(keyId, secret + 'x');
  const err = await rejectsWith(() => c.send(new ListTablesCommand({})), 'InvalidSignatureException');
  assert.match(err.message, /^The request signature we calculated does not match the signature you provided/);
  assert.equal(err.$metadata.httpStatusCode, 400);
  c.destroy();
});

test('an unknown access key: UnrecognizedClientException', { skip }, async () => {
  const c = authClient('DYNXNOSUCHKEY00000000', secret);
  const err = await rejectsWith(() => c.send(new ListTablesCommand({})), 'UnrecognizedClientException');
  assert.equal(err.message, 'The security token included in the request is invalid.');
  c.destroy();
});

test('no Authorization: MissingAuthenticationTokenException', { skip }, async () => {
  const r = await raw({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' }, '{}');
  assert.equal(r.status, 400);
  assert.deepEqual(r.json, { __type: 'com.amazon.coral.service#MissingAuthenticationTokenException', message: 'Request is missing Authentication Token' });
});

test('incomplete Authorization: IncompleteSignatureException', { skip }, async () => {
  const r = await raw({
    'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables',
    'x-amz-date': '20250101T000000Z', authorization: 'AWS4-HMAC-SHA256 Signature=abc',
  }, '{}');
  assert.equal(r.json.__type, 'com.amazon.coral.service#IncompleteSignatureException');
  assert.match(r.json.message, /Authorization header requires 'Credential' parameter/);
});

test('a tampered body fails the signature', { skip }, async () => {
  const headers = sign({ body: '{}', date: new Date() });
  const r = await raw(headers, '{"Limit":1}');
  assert.equal(r.json.__type, 'com.amazon.coral.service#InvalidSignatureException');
});

test('an old signature: InvalidSignatureException "Signature expired"', { skip }, async () => {
  const r = await raw(sign({ body: '{}', date: new Date(Date.now() - 3600 * 1000) }), '{}');
  assert.equal(r.json.__type, 'com.amazon.coral.service#InvalidSignatureException');
  assert.match(r.json.message, /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 15 min\.\)$/);
});

test('a wrong service in the scope: InvalidSignatureException', { skip }, async () => {
  const headers = sign({ body: '{}', date: new Date() });
  headers.authorization = headers.authorization.replace('/dynamodb/', '/s3/');
  const r = await raw(headers, '{}');
  assert.equal(r.json.__type, 'com.amazon.coral.service#InvalidSignatureException');
  assert.match(r.json.message, /Credential should be scoped to correct service: 'dynamodb'/);
});

test('a key whose role lacks privileges: AccessDeniedException', { skip: skip || (!process.env.GATEWAY_NOACCESS_KEY_ID && 'no GATEWAY_NOACCESS_KEY_ID') }, async () => {
  const c = authClient(process.env.GATEWAY_NOACCESS_KEY_ID, process.env.GATEWAY_NOACCESS_SECRET);
  const err = await rejectsWith(() => c.send(new GetItemCommand({ TableName: 'Anything', Key: { pk: { S: 'a' } } })), 'AccessDeniedException');
  assert.match(err.message, /^User: arn:aws:iam::\d{12}:user\/\S+ is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:us-east-1:\d{12}:table\/Anything because no identity-based policy allows the dynamodb:GetItem action$/);
  c.destroy();
});
