#!/usr/bin/env python3
"""boto3 against throughput enforcement (run by run.sh): the SDK's own retry
logic meets ProvisionedThroughputExceededException and retries to success.

A provisioned table of 1 WCU holds 300 units of burst.  A client without
retries drains it until DynamoDB's exception comes (checked: code, message);
then a client with boto3's retry logic (legacy mode, DynamoDB's 10 attempts)
writes five items one after another: the bucket refills one unit a second, so
the SDK must have retried, and every write succeeds.  GATEWAY_URL: the
endpoint (a dev-mode gateway).  Prints "# boto3-throttle: N passed, M failed".
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
KEY = os.environ.get("GATEWAY_CLIENT_KEY_ID") or "dev"
SECRET = os.environ.get("GATEWAY_CLIENT_SECRET") or "dev"
passed = failed = 0


def client(config):
    return boto3.client("dynamodb", endpoint_url=URL, region_name="us-east-1",
                        aws_access_key_id=KEY, aws_secret_access_key=SECRET, config=config)


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok - boto3-throttle: {name}")
    except Exception:  # noqa: BLE001 - report every failure
        failed += 1
        print(f"not ok - boto3-throttle: {name}")
        traceback.print_exc()


once = client(Config(retries={"max_attempts": 1, "mode": "standard"}))
retrying = client(Config(retries={"max_attempts": 10, "mode": "legacy"}))
table = "throttle_" + uuid.uuid4().hex[:10]
state = {}


def create():
    once.create_table(TableName=table,
                      AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                      KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                      BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})


def drain():
    # 300 units of burst and one more a second: the exception comes within a few hundred writes
    for i in range(2000):
        try:
            once.put_item(TableName=table, Item={"pk": {"S": f"drain{i}"}})
        except ClientError as e:
            state["error"] = e.response
            state["served"] = i
            return
    raise AssertionError("never throttled")


def exception():
    err = state["error"]["Error"]
    assert err["Code"] == "ProvisionedThroughputExceededException", err
    assert err["Message"] == ("The level of configured provisioned throughput for the table was exceeded. "
                              "Consider increasing your provisioning level with the UpdateTable API."), err
    assert state["error"]["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert state["served"] >= 300, state["served"]


def retried_to_success():
    attempts = 0
    for i in range(5):
        r = retrying.put_item(TableName=table, Item={"pk": {"S": f"retried{i}"}})
        attempts += r["ResponseMetadata"]["RetryAttempts"]
    # five writes at one unit a second from an empty bucket: the SDK retried some of them
    assert attempts > 0, attempts
    for i in range(5):
        got = retrying.get_item(TableName=table, Key={"pk": {"S": f"retried{i}"}}, ConsistentRead=True)
        assert "Item" in got, got
    state["retries"] = attempts


def cleanup():
    once.delete_table(TableName=table)


check("CreateTable with 1 WCU", create)
check("writes until the bucket is empty", drain)
check("ProvisionedThroughputExceededException with DynamoDB's message", exception)
check("the SDK's retry logic retries throttled writes to success", retried_to_success)
check("DeleteTable", cleanup)
print(f"# boto3-throttle: retries {state.get('retries')}")
print(f"# boto3-throttle: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
