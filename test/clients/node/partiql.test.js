// PartiQL through the gateway: ExecuteStatement, BatchExecuteStatement and
// ExecuteTransaction with @aws-sdk/client-dynamodb (typed values) and
// @aws-sdk/lib-dynamodb (native values), with DynamoDB's exception classes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateTableCommand, ExecuteStatementCommand, BatchExecuteStatementCommand, ExecuteTransactionCommand,
  DuplicateItemException, ConditionalCheckFailedException, TransactionCanceledException,
  IdempotentParameterMismatchException, DynamoDBServiceException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient, ExecuteStatementCommand as DocExecuteStatementCommand,
  BatchExecuteStatementCommand as DocBatchExecuteStatementCommand,
  ExecuteTransactionCommand as DocExecuteTransactionCommand,
} from '@aws-sdk/lib-dynamodb';
import { client, uniq, waitActive, dropTable, rejectsWith } from './helpers.js';

const ddb = client();
const doc = DynamoDBDocumentClient.from(ddb);
const T = uniq('pq');

before(async () => {
  await ddb.send(new CreateTableCommand({
    TableName: T,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'N' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    BillingMode: 'PAY_PER_REQUEST',
  }));
  await waitActive(ddb, T);
});

after(async () => { await dropTable(ddb, T); });

test('ExecuteStatement: INSERT, SELECT by key, Query with paging, UPDATE ... RETURNING, DELETE', async () => {
  for (let i = 1; i <= 5; i++) {
    await ddb.send(new ExecuteStatementCommand({
      Statement: `INSERT INTO "${T}" VALUE {'pk': ?, 'sk': ?, 'n': ?, 'tags': <<'a'>>}`,
      Parameters: [{ S: 'p1' }, { N: String(i) }, { N: String(i * 10) }],
    }));
  }
  const one = await ddb.send(new ExecuteStatementCommand({
    Statement: `SELECT n, tags FROM "${T}" WHERE pk = ? AND sk = ?`,
    Parameters: [{ S: 'p1' }, { N: '2' }],
    ReturnConsumedCapacity: 'TOTAL',
  }));
  assert.deepEqual(one.Items, [{ n: { N: '20' }, tags: { SS: ['a'] } }]);
  assert.equal(one.ConsumedCapacity.CapacityUnits, 0.5);

  // Limit and NextToken page a Query
  const seen = [];
  let NextToken;
  let pages = 0;
  do {
    const r = await ddb.send(new ExecuteStatementCommand({
      Statement: `SELECT sk FROM "${T}" WHERE pk = 'p1' AND sk >= 2 ORDER BY sk DESC`, Limit: 2, NextToken,
    }));
    seen.push(...r.Items.map((it) => Number(it.sk.N)));
    NextToken = r.NextToken;
    pages++;
  } while (NextToken);
  assert.deepEqual(seen, [5, 4, 3, 2]);
  assert.ok(pages >= 2);

  const upd = await ddb.send(new ExecuteStatementCommand({
    Statement: `UPDATE "${T}" SET n = n + 1 SET tags = set_add(tags, <<'b'>>) WHERE pk = 'p1' AND sk = 1 RETURNING MODIFIED NEW *`,
  }));
  assert.deepEqual(upd.Items, [{ n: { N: '11' }, tags: { SS: ['a', 'b'] } }]);

  const del = await ddb.send(new ExecuteStatementCommand({
    Statement: `DELETE FROM "${T}" WHERE pk = 'p1' AND sk = 5 RETURNING ALL OLD *`,
  }));
  assert.equal(del.Items[0].n.N, '50');
});

test('ExecuteStatement errors: DuplicateItemException, ConditionalCheckFailedException with Item, ValidationException', async () => {
  await rejectsWith(() => ddb.send(new ExecuteStatementCommand({
    Statement: `INSERT INTO "${T}" VALUE {'pk': 'p1', 'sk': 1}`,
  })), 'DuplicateItemException');
  try {
    await ddb.send(new ExecuteStatementCommand({
      Statement: `UPDATE "${T}" SET n = 0 WHERE pk = 'p1' AND sk = 1 AND n = 999`,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }));
    assert.fail('expected ConditionalCheckFailedException');
  } catch (err) {
    assert.ok(err instanceof ConditionalCheckFailedException, err.name);
    assert.equal(err.Item.n.N, '11');
  }
  const e = await rejectsWith(() => ddb.send(new ExecuteStatementCommand({
    Statement: `SELECT * FROM "${T}" WHERE`,
  })), 'ValidationException');
  assert.equal(e.message, "Statement wasn't well formed, can't be processed: Unexpected term");
  const e2 = await rejectsWith(() => ddb.send(new ExecuteStatementCommand({
    Statement: `UPDATE "${T}" SET n = 1 WHERE pk = 'p1'`,
  })), 'ValidationException');
  assert.equal(e2.message, 'Where clause does not contain a mandatory equality on all key attributes');
  assert.ok(DuplicateItemException && DynamoDBServiceException);
});

test('BatchExecuteStatement: per-statement results and Error entries', async () => {
  const w = await ddb.send(new BatchExecuteStatementCommand({
    Statements: [
      { Statement: `INSERT INTO "${T}" VALUE {'pk': 'b', 'sk': 1}` },
      { Statement: `INSERT INTO "${T}" VALUE {'pk': 'p1', 'sk': 1}` },
      { Statement: `UPDATE "${T}" SET n = 1 WHERE pk = 'p1' AND sk = 2 AND n = 0`, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
    ],
  }));
  assert.equal(w.Responses.length, 3);
  assert.equal(w.Responses[0].Error, undefined);
  assert.equal(w.Responses[1].Error.Code, 'DuplicateItem');
  assert.equal(w.Responses[1].Error.Message, 'Duplicate primary key exists in table');
  assert.equal(w.Responses[2].Error.Code, 'ConditionalCheckFailed');
  assert.equal(w.Responses[2].Error.Item.n.N, '20');
  const r = await ddb.send(new BatchExecuteStatementCommand({
    Statements: [
      { Statement: `SELECT * FROM "${T}" WHERE pk = 'b' AND sk = 1` },
      { Statement: `SELECT * FROM "${T}" WHERE pk = 'nobody' AND sk = 1` },
    ],
  }));
  assert.deepEqual(r.Responses[0].Item, { pk: { S: 'b' }, sk: { N: '1' } });
  assert.equal(r.Responses[1].Item, undefined);
});

test('ExecuteTransaction: all or nothing, CancellationReasons, ClientRequestToken, reads', async () => {
  try {
    await ddb.send(new ExecuteTransactionCommand({
      TransactStatements: [
        { Statement: `INSERT INTO "${T}" VALUE {'pk': 't', 'sk': 1}` },
        { Statement: `UPDATE "${T}" SET n = 1 WHERE pk = 'missing' AND sk = 1` },
      ],
    }));
    assert.fail('expected TransactionCanceledException');
  } catch (err) {
    assert.ok(err instanceof TransactionCanceledException, err.name);
    assert.deepEqual(err.CancellationReasons.map((c) => c.Code), ['None', 'ConditionalCheckFailed']);
  }
  const gone = await ddb.send(new ExecuteStatementCommand({ Statement: `SELECT * FROM "${T}" WHERE pk = 't' AND sk = 1` }));
  assert.deepEqual(gone.Items, []);

  const req = {
    ClientRequestToken: uniq('tok'),
    TransactStatements: [
      { Statement: `INSERT INTO "${T}" VALUE {'pk': 't', 'sk': 1}` },
      { Statement: `EXISTS(SELECT * FROM "${T}" WHERE pk = 'b' AND sk = 1 AND n IS MISSING)` },
    ],
  };
  await ddb.send(new ExecuteTransactionCommand(req));
  await ddb.send(new ExecuteTransactionCommand(req)); // the same request again: done once, success
  try {
    await ddb.send(new ExecuteTransactionCommand({ ...req, TransactStatements: [req.TransactStatements[1]] }));
    assert.fail('expected IdempotentParameterMismatchException');
  } catch (err) {
    assert.ok(err instanceof IdempotentParameterMismatchException, err.name);
  }
  const reads = await ddb.send(new ExecuteTransactionCommand({
    TransactStatements: [
      { Statement: `SELECT pk FROM "${T}" WHERE pk = 't' AND sk = 1` },
      { Statement: `SELECT pk FROM "${T}" WHERE pk = 'none' AND sk = 1` },
    ],
  }));
  assert.deepEqual(reads.Responses, [{ Item: { pk: { S: 't' } } }, {}]);
});

test('lib-dynamodb: native values in Parameters and Items', async () => {
  await doc.send(new DocExecuteStatementCommand({
    Statement: `INSERT INTO "${T}" VALUE {'pk': ?, 'sk': ?, 'doc': ?, 'flag': ?, 'set': ?}`,
    Parameters: ['native', 1, { a: [1, 'two', null], b: { c: true } }, false, new Set(['x', 'y'])],
  }));
  const r = await doc.send(new DocExecuteStatementCommand({
    Statement: `SELECT * FROM "${T}" WHERE pk = ? AND sk = ?`, Parameters: ['native', 1],
  }));
  assert.equal(r.Items.length, 1);
  assert.deepEqual(r.Items[0].doc, { a: [1, 'two', null], b: { c: true } });
  assert.equal(r.Items[0].flag, false);
  assert.deepEqual([...r.Items[0].set].sort(), ['x', 'y']);
  const b = await doc.send(new DocBatchExecuteStatementCommand({
    Statements: [
      { Statement: `UPDATE "${T}" SET flag = ? WHERE pk = ? AND sk = ?`, Parameters: [true, 'native', 1] },
      { Statement: `INSERT INTO "${T}" VALUE {'pk': ?, 'sk': ?}`, Parameters: ['native', 1] },
    ],
  }));
  assert.equal(b.Responses[0].Error, undefined);
  assert.equal(b.Responses[1].Error.Code, 'DuplicateItem');
  await doc.send(new DocExecuteTransactionCommand({
    TransactStatements: [
      { Statement: `UPDATE "${T}" SET n = ? WHERE pk = ? AND sk = ?`, Parameters: [42, 'native', 1] },
      { Statement: `DELETE FROM "${T}" WHERE pk = ? AND sk = ?`, Parameters: ['b', 1] },
    ],
  }));
  const t = await doc.send(new DocExecuteTransactionCommand({
    TransactStatements: [{ Statement: `SELECT n, flag FROM "${T}" WHERE pk = ? AND sk = ?`, Parameters: ['native', 1] }],
  }));
  assert.deepEqual(t.Responses[0].Item, { n: 42, flag: true });
});
