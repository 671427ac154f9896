#!/usr/bin/env python3
"""boto3 smoke test of dynindex-gateway (run by run.sh).

GATEWAY_URL: a dev-mode gateway.  With GATEWAY_AUTH_URL, GATEWAY_KEY_ID and
GATEWAY_SECRET also checks SigV4: the right key works, a wrong secret fails as
DynamoDB fails it.  Prints "N passed, M failed" and exits non-zero on failure.
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
passed = failed = 0


# run.sh's SigV4 pass sets GATEWAY_CLIENT_KEY_ID/_SECRET to a real access key.
CLIENT_KEY = os.environ.get("GATEWAY_CLIENT_KEY_ID") or "dev"
CLIENT_SECRET = os.environ.get("GATEWAY_CLIENT_SECRET") or "dev"


def client(url=URL, key=CLIENT_KEY, secret=CLIENT_SECRET):
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret, config=CFG)


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok - boto3: {name}")
    except Exception:  # noqa: BLE001 - report every failure
        failed += 1
        print(f"not ok - boto3: {name}")
        traceback.print_exc()


def error_code(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"].get("Message")
    return None, None


ddb = client()
table = "boto_" + uuid.uuid4().hex[:10]


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


def put_get():
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "héllo"},
                                        "b": {"B": b"\x00\xff"}})
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    assert item["v"]["S"] == "héllo", item
    assert item["b"]["B"] == b"\x00\xff", item


def resource_api():
    t = boto3.resource("dynamodb", endpoint_url=URL, region_name="us-east-1",
                       aws_access_key_id=CLIENT_KEY, aws_secret_access_key=CLIENT_SECRET,
                       config=CFG).Table(table)
    with t.batch_writer() as w:
        for i in range(30):
            w.put_item(Item={"pk": "batch", "sk": i, "n": i * 2})
    # the resource's client (de)serializes plain Python values itself
    got = t.meta.client.batch_get_item(RequestItems={table: {"Keys": [{"pk": "batch", "sk": i} for i in range(30)]}})
    assert len(got["Responses"][table]) == 30, got
    t.delete_item(Key={"pk": "batch", "sk": 0})
    assert "Item" not in t.get_item(Key={"pk": "batch", "sk": 0})


def errors():
    code, _ = error_code(lambda: ddb.describe_table(TableName="no_such_" + table))
    assert code == "ResourceNotFoundException", code
    code, msg = error_code(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
                                                ConditionExpression="attribute_not_exists(pk)"))
    assert code == "ConditionalCheckFailedException", (code, msg)
    try:
        ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
                     ConditionExpression="attribute_not_exists(pk)")
    except ddb.exceptions.ConditionalCheckFailedException:
        pass
    code, _ = error_code(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}}))
    assert code == "ValidationException", code


def list_and_delete():
    assert table in ddb.list_tables()["TableNames"]
    ddb.delete_table(TableName=table)
    code, _ = error_code(lambda: ddb.describe_table(TableName=table))
    assert code == "ResourceNotFoundException", code


check("CreateTable/DescribeTable", create)
check("PutItem/GetItem", put_get)
check("resource API: batch_writer, BatchGetItem, DeleteItem", resource_api)
check("error codes", errors)
check("ListTables/DeleteTable", list_and_delete)

auth_url = os.environ.get("GATEWAY_AUTH_URL")
key, secret = os.environ.get("GATEWAY_KEY_ID"), os.environ.get("GATEWAY_SECRET")
if auth_url and key and secret:
    def signed_ok():
        assert "TableNames" in client(auth_url, key, secret).list_tables()

    def wrong_secret():
        code, msg = error_code(lambda: client(auth_url, key, secret + "x").list_tables())
        assert code == "InvalidSignatureException", (code, msg)

    def unknown_key():
        code, msg = error_code(lambda: client(auth_url, "DYNXUNKNOWN", secret).list_tables())
        assert code == "UnrecognizedClientException", (code, msg)
        assert msg == "The security token included in the request is invalid.", msg

    check("SigV4: the right key works", signed_ok)
    check("SigV4: a wrong secret is InvalidSignatureException", wrong_secret)
    check("SigV4: an unknown key is UnrecognizedClientException", unknown_key)
else:
    print("# boto3: SigV4 checks skipped (no GATEWAY_AUTH_URL)")

print(f"# boto3: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
