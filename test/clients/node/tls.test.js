// HTTPS: run.sh starts a gateway with --tls-cert/--tls-key (a server certificate
// signed by a throwaway CA that run.sh generates with openssl) and SigV4 on.
// The SDK trusts that CA and works; without it, the SDK refuses the certificate;
// plain HTTP to the TLS port gets no answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import { DynamoDBClient, ListTablesCommand, CreateTableCommand, PutItemCommand, GetItemCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { uniq, waitActive } from './helpers.js';

const url = process.env.GATEWAY_TLS_URL;
const caFile = process.env.GATEWAY_TLS_CA;
const keyId = process.env.GATEWAY_KEY_ID;
const secret = process.env.GATEWAY_SECRET;
const skip = !url || !caFile || !keyId ? 'GATEWAY_TLS_URL / GATEWAY_TLS_CA / GATEWAY_KEY_ID not set' : false;

function tlsClient(ca) {
  return new DynamoDBClient({
    endpoint: url, region: 'us-east-1', maxAttempts: 1,
    credentials: { accessKeyId: keyId, secretAccessKey: secret },
    requestHandler: new NodeHttpHandler({ httpsAgent: new https.Agent({ keepAlive: true, ...(ca ? { ca } : {}) }) }),
  });
}

test('HTTPS with a certificate from the test\'s own CA: the SDK works (SigV4 over TLS)', { skip }, async () => {
  assert.match(url, /^https:\/\//);
  const ddb = tlsClient(fs.readFileSync(caFile));
  const T = uniq('tls');
  try {
    assert.ok(Array.isArray((await ddb.send(new ListTablesCommand({}))).TableNames));
    await ddb.send(new CreateTableCommand({
      TableName: T, BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }));
    await waitActive(ddb, T);
    await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'a' }, v: { S: 'x'.repeat(10000) } } }));
    const r = await ddb.send(new GetItemCommand({ TableName: T, Key: { pk: { S: 'a' } } }));
    assert.equal(r.Item.v.S.length, 10000);
  } finally {
    await ddb.send(new DeleteTableCommand({ TableName: T })).catch(() => {});
    ddb.destroy();
  }
});

test('HTTPS: without the CA the SDK refuses the self-signed chain', { skip }, async () => {
  const ddb = tlsClient(null);
  await assert.rejects(() => ddb.send(new ListTablesCommand({})), (err) => /certificate|self[- ]signed/i.test(`${err.code} ${err.message}`));
  ddb.destroy();
});

test('HTTPS port: plain HTTP gets no HTTP answer', { skip }, async () => {
  const plain = url.replace(/^https:/, 'http:');
  let status;
  try {
    status = (await fetch(plain + '/', { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    status = 'error';
  }
  assert.equal(status, 'error');
});
