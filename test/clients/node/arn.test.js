// ARNs carry the region of the request's SigV4 credential scope and the
// gateway's account id (--account-id), and the tagging operations accept
// exactly those ARNs: a client that builds its table's ARN for its own region
// can tag it.  run.sh runs this file in both passes (--dev, and SigV4 with
// --account-id 123456789012).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, DescribeTableCommand, TagResourceCommand, ListTagsOfResourceCommand,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, dropTable, waitActive } from './helpers.js';

const account = process.env.GATEWAY_ACCOUNT_ID || '000000000000';

for (const region of ['us-east-1', 'eu-west-1', 'ap-southeast-2']) {
  test(`ARNs name the client's region (${region}) and the account ${account}; tagging takes them`, async () => {
    const ddb = client({ region });
    const T = uniq('arn');
    try {
      const c = await ddb.send(new CreateTableCommand({
        TableName: T, BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'g', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [{ IndexName: 'byG', KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } }],
      }));
      const arn = `arn:aws:dynamodb:${region}:${account}:table/${T}`;
      assert.equal(c.TableDescription.TableArn, arn);
      const t = await waitActive(ddb, T);
      assert.equal(t.TableArn, arn);
      assert.equal(t.GlobalSecondaryIndexes[0].IndexArn, `${arn}/index/byG`);
      // the ARN built by the client itself, not the one read back
      await ddb.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: 'region', Value: region }] }));
      const r = await ddb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }));
      assert.deepEqual(r.Tags, [{ Key: 'region', Value: region }]);
    } finally {
      await dropTable(ddb, T);
      ddb.destroy();
    }
  });
}
