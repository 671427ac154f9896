#!/usr/bin/env python3
"""boto3 test of ImportTable, DescribeImport and ListImports through the endpoint (run by
run.sh, which puts the files in the directory store IMPORT_BUCKET under IMPORT_PREFIX:
2 gzip objects of DynamoDB JSON lines, 3 items, one of them a bad record).

GATEWAY_URL: a dev-mode gateway.  Prints "# boto3-import: N passed, M failed" and exits
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
BUCKET = os.environ.get("IMPORT_BUCKET", "client-imports")
PREFIX = os.environ.get("IMPORT_PREFIX", "data/")
CFG = Config(retries={"max_attempts": 1, "mode": "standard"})
ddb = boto3.client("dynamodb", endpoint_url=URL, region_name="us-east-1",
                   aws_access_key_id="dev", aws_secret_access_key="dev", config=CFG)
table = "bimp_" + uuid.uuid4().hex[:10]
passed = failed = 0
state = {}


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok - boto3 import: {name}")
    except Exception:  # noqa: BLE001 - report every failure
        failed += 1
        print(f"not ok - boto3 import: {name}")
        traceback.print_exc()


def error_of(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"]["Message"]
    raise AssertionError("no error")


def params(name):
    return dict(S3BucketSource={"S3Bucket": BUCKET, "S3KeyPrefix": PREFIX}, InputFormat="DYNAMODB_JSON",
                InputCompressionType="GZIP",
                TableCreationParameters={"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                                         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})


def start():
    r = ddb.import_table(ClientToken="tok-" + table, **params(table))["ImportTableDescription"]
    assert r["ImportStatus"] == "IN_PROGRESS", r
    assert r["ImportArn"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}/import/"), r
    assert r["TableCreationParameters"]["TableName"] == table
    state["arn"] = r["ImportArn"]


def describe_until_done():
    for _ in range(600):
        d = ddb.describe_import(ImportArn=state["arn"])["ImportTableDescription"]
        if d["ImportStatus"] != "IN_PROGRESS":
            break
        time.sleep(0.1)
    assert d["ImportStatus"] == "COMPLETED", d
    assert (d["ProcessedItemCount"], d["ImportedItemCount"], d["ErrorCount"]) == (4, 3, 1), d
    assert d["ProcessedSizeBytes"] > 0 and d["EndTime"] >= d["StartTime"], d
    assert d["CloudWatchLogGroupArn"].startswith("arn:aws:logs:"), d


def table_active_with_items():
    t = ddb.describe_table(TableName=table)["Table"]
    assert t["TableStatus"] == "ACTIVE" and t["ItemCount"] == 3, t
    items = ddb.scan(TableName=table)["Items"]
    assert sorted(i["pk"]["S"] for i in items) == ["a", "b", "c"], items


def idempotent():
    r = ddb.import_table(ClientToken="tok-" + table, **params(table))["ImportTableDescription"]
    assert r["ImportArn"] == state["arn"] and r["ImportStatus"] == "COMPLETED", r


def conflict():
    code, _ = error_of(lambda: ddb.import_table(ClientToken="tok-" + table, **params(table + "x")))
    assert code == "ImportConflictException", code


def exists():
    code, msg = error_of(lambda: ddb.import_table(**params(table)))
    assert code == "ResourceInUseException" and msg == f"Table already exists: {table}", (code, msg)


def not_found():
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}/import/01234567890123-abcdef12"
    code, msg = error_of(lambda: ddb.describe_import(ImportArn=arn))
    assert code == "ImportNotFoundException" and msg == f"Import not found: {arn}", (code, msg)


def validation():
    code, msg = error_of(lambda: ddb.list_imports(PageSize=26))
    assert code == "ValidationException" and "pageSize" in msg, (code, msg)


def listing():
    arns = []
    kw = {"PageSize": 1}
    pages = 0
    while True:
        page = ddb.list_imports(**kw)
        pages += 1
        assert len(page["ImportSummaryList"]) <= 1, page
        arns += [s["ImportArn"] for s in page["ImportSummaryList"]]
        if "NextToken" not in page:
            break
        kw["NextToken"] = page["NextToken"]
    assert state["arn"] in arns and pages >= len(arns), (arns, pages)
    mine = ddb.list_imports(TableArn=f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}")["ImportSummaryList"]
    assert [s["ImportArn"] for s in mine] == [state["arn"]] and mine[0]["ImportStatus"] == "COMPLETED", mine


check("import_table starts an import", start)
check("describe_import until COMPLETED, with the counts", describe_until_done)
check("the table is ACTIVE with the items", table_active_with_items)
check("the same ClientToken and request: the same import", idempotent)
check("the same ClientToken, another request: ImportConflictException", conflict)
check("an existing table: ResourceInUseException", exists)
check("describe_import of no import: ImportNotFoundException", not_found)
check("list_imports PageSize 26: ValidationException", validation)
check("list_imports pages (PageSize 1, NextToken) and TableArn", listing)
try:
    ddb.delete_table(TableName=table)
except ClientError:
    pass
print(f"# boto3-import: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
