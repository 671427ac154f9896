#!/usr/bin/env python3
"""boto3 test of PartiQL through dynindex-gateway (run by run.sh): execute_statement,
batch_execute_statement and execute_transaction with DynamoDB's error codes.

GATEWAY_URL: a dev-mode gateway.  Prints "# boto3-partiql: N passed, M failed" and exits
non-zero on failure.
"""
import os
import sys
import time
import traceback
import uuid

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

URL = os.environ.get("GATEWAY_URL", "http://127.0.0.1:8000")
CFG = Config(retries={"max_attempts": 1, "mode": "standard"})
ddb = boto3.client("dynamodb", endpoint_url=URL, region_name="us-east-1",
                   aws_access_key_id="dev", aws_secret_access_key="dev", config=CFG)
table = "bpq_" + uuid.uuid4().hex[:10]
passed = failed = 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok - boto3 partiql: {name}")
    except Exception:  # noqa: BLE001 - report every failure
        failed += 1
        print(f"not ok - boto3 partiql: {name}")
        traceback.print_exc()


def error_of(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"].get("Message"), e.response
    return None, None, None


def create():
    ddb.create_table(TableName=table,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "sk", "AttributeType": "N"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                {"AttributeName": "sk", "KeyType": "RANGE"}],
                     BillingMode="PAY_PER_REQUEST")
    for _ in range(100):
        if ddb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE":
            return
        time.sleep(0.1)
    raise AssertionError("table not ACTIVE")


def execute_statement():
    for i in range(1, 4):
        ddb.execute_statement(Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': ?, 'b': ?}}",
                              Parameters=[{"S": "a"}, {"N": str(i)}, {"B": bytes([i, 255])}])
    r = ddb.execute_statement(Statement=f"SELECT sk, b FROM \"{table}\" WHERE pk = 'a' AND sk BETWEEN 2 AND 3")
    assert [it["sk"]["N"] for it in r["Items"]] == ["2", "3"], r
    assert r["Items"][0]["b"]["B"] == bytes([2, 255]), r
    r = ddb.execute_statement(Statement=f"SELECT sk FROM \"{table}\" WHERE pk = 'a'", Limit=1)
    assert "NextToken" in r, r
    r2 = ddb.execute_statement(Statement=f"SELECT sk FROM \"{table}\" WHERE pk = 'a'", Limit=1,
                               NextToken=r["NextToken"])
    assert r2["Items"] == [{"sk": {"N": "2"}}], r2
    r = ddb.execute_statement(Statement=f"UPDATE \"{table}\" SET v = 'x' WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *")
    assert r["Items"][0]["v"] == {"S": "x"}, r


def in_pages():
    # an IN on the partition key answers in pages of up to 10 items; NextToken goes on
    for i in range(12):
        ddb.execute_statement(Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': 0}}",
                              Parameters=[{"S": f"in{i:02d}"}])
    stmt = f"SELECT pk FROM \"{table}\" WHERE pk IN [" + ", ".join(f"'in{i:02d}'" for i in range(12)) + "]"
    pages, token = [], None
    while True:
        r = ddb.execute_statement(Statement=stmt, **({"NextToken": token} if token else {}))
        pages.append([it["pk"]["S"] for it in r["Items"]])
        token = r.get("NextToken")
        if not token:
            break
    assert [len(p) for p in pages] == [10, 2], pages
    assert sum(pages, []) == [f"in{i:02d}" for i in range(12)], pages


def errors():
    code, msg, _ = error_of(lambda: ddb.execute_statement(
        Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'sk': 1}}"))
    assert (code, msg) == ("DuplicateItemException", "Duplicate primary key exists in table"), (code, msg)
    code, msg, _ = error_of(lambda: ddb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'a' foo"))
    assert (code, msg) == ("ValidationException",
                           "Statement wasn't well formed, can't be processed: Unexpected token after expression"), msg
    # ReturnValuesOnConditionCheckFailure exists in botocore's model since 2023; older ones refuse it
    members = ddb.meta.service_model.operation_model("ExecuteStatement").input_shape.members
    extra = {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"} if "ReturnValuesOnConditionCheckFailure" in members else {}
    code, msg, resp = error_of(lambda: ddb.execute_statement(
        Statement=f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 'no'", **extra))
    assert code == "ConditionalCheckFailedException", code
    if extra:
        assert resp["Item"]["v"] == {"S": "x"}, resp


def batch():
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": f"UPDATE \"{table}\" SET n = 1 WHERE pk = 'a' AND sk = 2"},
        {"Statement": f"UPDATE \"{table}\" SET n = 1 WHERE pk = 'zz' AND sk = 2"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'a'"},
    ])
    codes = [x.get("Error", {}).get("Code") for x in r["Responses"]]
    assert codes == [None, "ConditionalCheckFailed", "ValidationError"], r
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'a' AND sk = 2", "ConsistentRead": True}])
    assert r["Responses"][0]["Item"] == {"n": {"N": "1"}}, r


def transaction():
    code, msg, resp = error_of(lambda: ddb.execute_transaction(TransactStatements=[
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'c', 'sk': 1}}"},
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'sk': 1}}"}]))
    assert code == "TransactionCanceledException", code
    assert [c["Code"] for c in resp["CancellationReasons"]] == ["None", "DuplicateItem"], resp
    tok = uuid.uuid4().hex
    stmts = [{"Statement": f"UPDATE \"{table}\" SET n = n + 1 WHERE pk = 'a' AND sk = 2"}]
    ddb.execute_transaction(TransactStatements=stmts, ClientRequestToken=tok)
    ddb.execute_transaction(TransactStatements=stmts, ClientRequestToken=tok)
    r = ddb.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'a' AND sk = 2"}])
    assert r["Responses"] == [{"Item": {"n": {"N": "2"}}}], r
    code, msg, _ = error_of(lambda: ddb.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT n FROM \"{table}\" WHERE pk = 'a' AND sk = 2"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 2"}]))
    assert msg == "ExecuteTransaction API does not support both read and write operations in the same request.", msg


check("create table", create)
check("execute_statement: INSERT, SELECT, NextToken, UPDATE RETURNING", execute_statement)
check("execute_statement: IN on the partition key in pages of 10 with NextToken", in_pages)
check("errors: DuplicateItemException, syntax, ConditionalCheckFailed with Item", errors)
check("batch_execute_statement: per-statement Error", batch)
check("execute_transaction: cancellation reasons, token, reads", transaction)
try:
    ddb.delete_table(TableName=table)
except ClientError:
    pass
print(f"# boto3-partiql: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
