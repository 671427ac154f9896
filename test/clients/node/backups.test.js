// On-demand backups through the gateway with the AWS SDK for JavaScript v3:
// CreateBackup, ListBackups, DescribeBackup, RestoreTableFromBackup of a table
// with an LSI and a GSI, Query of the restored indexes, DeleteBackup, the
// errors DynamoDB's exception classes name, and point-in-time recovery.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, PutItemCommand, DeleteItemCommand, QueryCommand, DescribeTableCommand,
  CreateBackupCommand, DescribeBackupCommand, ListBackupsCommand, DeleteBackupCommand,
  RestoreTableFromBackupCommand, DescribeContinuousBackupsCommand, UpdateContinuousBackupsCommand,
  RestoreTableToPointInTimeCommand, GetItemCommand,
  BackupNotFoundException, TableAlreadyExistsException, TableNotFoundException,
  PointInTimeRecoveryUnavailableException, InvalidRestoreTimeException,
} from '@aws-sdk/client-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith } from './helpers.js';

const ddb = client();
const T = uniq('bk');
const R = `${T}_restored`;
const R2 = `${T}_prov`;
const backups = [];

before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'n', AttributeType: 'N' }, { AttributeName: 'g', AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    LocalSecondaryIndexes: [{
      IndexName: 'byN',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'n', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'ALL' },
    }],
    GlobalSecondaryIndexes: [{
      IndexName: 'byG',
      KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }, { AttributeName: 'n', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T);
  for (let i = 0; i < 10; i++) {
    await ddb.send(new PutItemCommand({
      TableName: T,
      Item: {
        pk: { S: `p${i % 2}` }, sk: { S: `s${i}` }, n: { N: String(i) },
        ...(i % 3 === 0 ? { g: { S: 'three' } } : {}),
      },
    }));
  }
});

after(async () => {
  for (const arn of backups) {
    try { await ddb.send(new DeleteBackupCommand({ BackupArn: arn })); } catch (err) { /* already gone */ }
  }
  await dropTable(ddb, T);
  await dropTable(ddb, R);
  await dropTable(ddb, R2);
  ddb.destroy();
});

test('backup, list, describe, restore with indexes, query the restored indexes', async () => {
  const created = await ddb.send(new CreateBackupCommand({ TableName: T, BackupName: 'client-test' }));
  const arn = created.BackupDetails.BackupArn;
  backups.push(arn);
  assert.match(arn, new RegExp(`:table/${T}/backup/[0-9]{14}-[0-9a-f]{8}$`));
  // DynamoDB answers CREATING; dynindex's copy is complete, so DescribeBackup says AVAILABLE at once
  assert.equal(created.BackupDetails.BackupStatus, 'CREATING');
  assert.ok(created.BackupDetails.BackupCreationDateTime instanceof Date);

  // a write after the backup is not restored
  await ddb.send(new DeleteItemCommand({ TableName: T, Key: { pk: { S: 'p0' }, sk: { S: 's0' } } }));

  const listed = await ddb.send(new ListBackupsCommand({ TableName: T }));
  assert.deepEqual(listed.BackupSummaries.map((b) => b.BackupArn), [arn]);
  assert.equal(listed.BackupSummaries[0].BackupSizeBytes > 0, true);
  assert.equal(listed.LastEvaluatedBackupArn, undefined);

  const desc = await ddb.send(new DescribeBackupCommand({ BackupArn: arn }));
  assert.equal(desc.BackupDescription.BackupDetails.BackupStatus, 'AVAILABLE');
  assert.equal(desc.BackupDescription.SourceTableDetails.ItemCount, 10);
  assert.equal(desc.BackupDescription.SourceTableDetails.TableName, T);
  assert.deepEqual(desc.BackupDescription.SourceTableFeatureDetails.LocalSecondaryIndexes.map((i) => i.IndexName), ['byN']);
  assert.deepEqual(desc.BackupDescription.SourceTableFeatureDetails.GlobalSecondaryIndexes.map((i) => i.IndexName), ['byG']);

  const restored = await ddb.send(new RestoreTableFromBackupCommand({ TargetTableName: R, BackupArn: arn }));
  assert.equal(restored.TableDescription.RestoreSummary.SourceBackupArn, arn);
  assert.equal(restored.TableDescription.TableStatus, 'CREATING');
  assert.equal(restored.TableDescription.RestoreSummary.RestoreInProgress, true);
  const table = await waitActive(ddb, R);
  assert.equal(table.RestoreSummary.RestoreInProgress, false);
  assert.equal(table.ItemCount, 10);
  assert.equal(table.GlobalSecondaryIndexes[0].IndexStatus, 'ACTIVE');

  const byN = await ddb.send(new QueryCommand({
    TableName: R, IndexName: 'byN', KeyConditionExpression: 'pk = :p AND n < :n',
    ExpressionAttributeValues: { ':p': { S: 'p0' }, ':n': { N: '5' } },
  }));
  assert.deepEqual(byN.Items.map((i) => i.sk.S), ['s0', 's2', 's4']);
  const byG = await ddb.send(new QueryCommand({
    TableName: R, IndexName: 'byG', KeyConditionExpression: 'g = :g',
    ExpressionAttributeValues: { ':g': { S: 'three' } }, ScanIndexForward: false,
  }));
  assert.deepEqual(byG.Items.map((i) => i.n.N), ['9', '6', '3', '0']);

  await rejectsWith(() => ddb.send(new RestoreTableFromBackupCommand({ TargetTableName: R, BackupArn: arn })),
    'TableAlreadyExistsException');
});

test('restore overrides: provisioned, no GSI', async () => {
  const arn = (await ddb.send(new CreateBackupCommand({ TableName: T, BackupName: 'client-test-2' }))).BackupDetails.BackupArn;
  backups.push(arn);
  const r = await ddb.send(new RestoreTableFromBackupCommand({
    TargetTableName: R2, BackupArn: arn, BillingModeOverride: 'PROVISIONED',
    ProvisionedThroughputOverride: { ReadCapacityUnits: 3, WriteCapacityUnits: 4 },
    GlobalSecondaryIndexOverride: [],
  }));
  assert.equal(r.TableDescription.ProvisionedThroughput.ReadCapacityUnits, 3);
  assert.equal(r.TableDescription.GlobalSecondaryIndexes, undefined);
  const d = await ddb.send(new DescribeTableCommand({ TableName: R2 }));
  assert.deepEqual(d.Table.LocalSecondaryIndexes.map((i) => i.IndexName), ['byN']);
  assert.equal(d.Table.ItemCount, 9);
});

test('errors: DynamoDB exception classes', async () => {
  const missing = `arn:aws:dynamodb:us-east-1:000000000000:table/${T}/backup/01700000000000-00000000`;
  const e1 = await rejectsWith(() => ddb.send(new DescribeBackupCommand({ BackupArn: missing })), 'BackupNotFoundException');
  assert.ok(e1 instanceof BackupNotFoundException);
  assert.equal(e1.message, `Backup not found: ${missing}`);
  const e2 = await rejectsWith(() => ddb.send(new CreateBackupCommand({ TableName: `${T}_none`, BackupName: 'x-y-z' })),
    'TableNotFoundException');
  assert.ok(e2 instanceof TableNotFoundException);
  const e3 = await rejectsWith(() => ddb.send(new CreateBackupCommand({ TableName: T, BackupName: 'no spaces' })),
    'ValidationException');
  assert.match(e3.message, /at 'backupName' failed to satisfy constraint: Member must satisfy regular expression pattern/);
  assert.ok(TableAlreadyExistsException);
});

test('DeleteBackup, then it is gone', async () => {
  const arn = (await ddb.send(new CreateBackupCommand({ TableName: T, BackupName: 'to-delete' }))).BackupDetails.BackupArn;
  const d = await ddb.send(new DeleteBackupCommand({ BackupArn: arn }));
  assert.equal(d.BackupDescription.BackupDetails.BackupStatus, 'DELETED');
  await rejectsWith(() => ddb.send(new DeleteBackupCommand({ BackupArn: arn })), 'BackupNotFoundException');
});

test('point-in-time recovery: enable, describe the window, restore to a time, errors', async () => {
  const d = await ddb.send(new DescribeContinuousBackupsCommand({ TableName: T }));
  assert.equal(d.ContinuousBackupsDescription.ContinuousBackupsStatus, 'ENABLED');
  assert.equal(d.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus, 'DISABLED');
  const off = await rejectsWith(() => ddb.send(new RestoreTableToPointInTimeCommand({
    SourceTableName: T, TargetTableName: `${T}_pitr`, UseLatestRestorableTime: true,
  })), 'PointInTimeRecoveryUnavailableException');
  assert.ok(off instanceof PointInTimeRecoveryUnavailableException);

  const u = await ddb.send(new UpdateContinuousBackupsCommand({
    TableName: T, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 2 },
  }));
  const p = u.ContinuousBackupsDescription.PointInTimeRecoveryDescription;
  assert.equal(p.PointInTimeRecoveryStatus, 'ENABLED');
  assert.equal(p.RecoveryPeriodInDays, 2);
  assert.ok(p.EarliestRestorableDateTime instanceof Date && p.LatestRestorableDateTime instanceof Date);

  // an item changed after a point in time: the restore has its value then
  await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'pitr' }, sk: { S: 's' }, v: { N: '1' } } }));
  await new Promise((r) => setTimeout(r, 20));
  const at = (await ddb.send(new DescribeContinuousBackupsCommand({ TableName: T })))
    .ContinuousBackupsDescription.PointInTimeRecoveryDescription.LatestRestorableDateTime;
  await new Promise((r) => setTimeout(r, 20));
  await ddb.send(new PutItemCommand({ TableName: T, Item: { pk: { S: 'pitr' }, sk: { S: 's' }, v: { N: '2' } } }));
  const r = await ddb.send(new RestoreTableToPointInTimeCommand({
    SourceTableName: T, TargetTableName: `${T}_pitr`, RestoreDateTime: at,
  }));
  assert.equal(r.TableDescription.RestoreSummary.RestoreInProgress, true);
  await waitActive(ddb, `${T}_pitr`);
  const g = await ddb.send(new GetItemCommand({ TableName: `${T}_pitr`, Key: { pk: { S: 'pitr' }, sk: { S: 's' } } }));
  assert.equal(g.Item.v.N, '1');
  await dropTable(ddb, `${T}_pitr`);

  const bad = await rejectsWith(() => ddb.send(new RestoreTableToPointInTimeCommand({
    SourceTableName: T, TargetTableName: `${T}_pitr2`, RestoreDateTime: new Date(Date.now() + 3600 * 1000),
  })), 'InvalidRestoreTimeException');
  assert.ok(bad instanceof InvalidRestoreTimeException);
  await ddb.send(new UpdateContinuousBackupsCommand({
    TableName: T, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: false },
  }));
  await ddb.send(new DeleteItemCommand({ TableName: T, Key: { pk: { S: 'pitr' }, sk: { S: 's' } } }));
});
