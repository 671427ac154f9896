#!/usr/bin/env python3
"""A table created through the gateway on a Citus coordinator (run by test/citus/run.sh).

GATEWAY_URL: a --dev gateway on the coordinator.  Creates CitusGatewayProbe (an LSI
and a GSI) with boto3, writes and reads an item, and queries both indexes; run.sh
then checks in pg_dist_partition that the table's three relations are distributed.
Exits non-zero on any failure.
"""
import os
import time

import boto3
from botocore.config import Config

ddb = boto3.client("dynamodb", endpoint_url=os.environ["GATEWAY_URL"], region_name="us-east-1",
                   aws_access_key_id="dev", aws_secret_access_key="dev",
                   config=Config(retries={"max_attempts": 1, "mode": "standard"}))
T = "CitusGatewayProbe"
try:
    ddb.delete_table(TableName=T)
except ddb.exceptions.ResourceNotFoundException:
    pass
ddb.create_table(
    TableName=T, BillingMode="PAY_PER_REQUEST",
    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "l", "g")],
    LocalSecondaryIndexes=[{"IndexName": "byL",
                            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                          {"AttributeName": "l", "KeyType": "RANGE"}],
                            "Projection": {"ProjectionType": "ALL"}}],
    GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                             "Projection": {"ProjectionType": "ALL"}}])
for i in range(20):
    ddb.put_item(TableName=T, Item={"pk": {"S": f"p{i % 5}"}, "sk": {"S": str(i)},
                                    "l": {"S": f"l{i}"}, "g": {"S": f"g{i % 2}"}})
item = ddb.get_item(TableName=T, Key={"pk": {"S": "p3"}, "sk": {"S": "8"}})["Item"]
assert item["g"] == {"S": "g0"}, item
r = ddb.query(TableName=T, IndexName="byL", KeyConditionExpression="pk = :p AND l > :l",
              ExpressionAttributeValues={":p": {"S": "p1"}, ":l": {"S": "l1"}})
assert [x["sk"]["S"] for x in r["Items"]] == ["11", "16", "6"], r["Items"]
n = -1
for _ in range(100):   # the GSI is eventually consistent
    n = ddb.query(TableName=T, IndexName="byG", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "g1"}}, Select="COUNT")["Count"]
    if n == 10:
        break
    time.sleep(0.1)
assert n == 10, n
assert ddb.scan(TableName=T, Select="COUNT")["Count"] == 20
print("ok - CitusGatewayProbe: CreateTable, PutItem, GetItem, LSI and GSI Query, Scan through the gateway")
