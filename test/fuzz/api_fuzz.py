#!/usr/bin/env python3
"""Structure-aware fuzzer for dynindex.api(op, request).

Generates DynamoDB requests for every operation from valid seeds (built from the
schemas of a handful of scratch tables) and mutates them: members dropped or added,
values replaced by values of other JSON types, empty objects/arrays everywhere,
malformed AttributeValues, expression token soup, extreme Limit/Segment values,
garbage ExclusiveStartKeys, batches and transactions of odd sizes and duplicates,
requests sent to the wrong operation.  Each request runs as its own statement;
the outcome is classified as

    OK      the request succeeded
    YD      a DynamoDB error (SQLSTATE class YD, message "<Type>: <text>"): fine
    BUG     any other SQLSTATE, YD500, a YD error whose message is malformed or
            mentions an internal error or holds a C NULL string ("(null)"), or a
            statement timeout
    CRASH   the connection was lost (the backend died); the request is replayed
            on a fresh connection to confirm it

Failing requests are appended (JSON lines) to --out and can be replayed with
--replay FILE.  Needs psycopg2 (Debian: python3-psycopg2).

    python3 test/fuzz/api_fuzz.py --dsn 'host=/tmp/fuzz port=5493 dbname=fz user=postgres' \\
        --seed 1 --count 50000
"""
import argparse
import base64
import collections
import copy
import json
import os
import random
import re
import sys
import time

try:
    import psycopg2
    import psycopg2.extensions
except ImportError:  # pragma: no cover
    sys.stderr.write("api_fuzz.py needs psycopg2 (apt-get install python3-psycopg2)\n")
    sys.exit(2)

OPS = ["CreateTable", "DescribeTable", "ListTables", "DeleteTable", "UpdateTable",
       "PutItem", "GetItem", "DeleteItem", "UpdateItem", "BatchGetItem",
       "BatchWriteItem", "Query", "Scan", "TransactWriteItems", "TransactGetItems",
       "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
       "ListStreams", "DescribeStream", "GetShardIterator", "GetRecords",
       "ExportTableToPointInTime", "DescribeExport", "ListExports",
       # global tables: the legacy (2017.11.29) operations and replica auto scaling
       "CreateGlobalTable", "DescribeGlobalTable", "ListGlobalTables", "UpdateGlobalTable",
       "DescribeGlobalTableSettings", "UpdateGlobalTableSettings",
       "DescribeTableReplicaAutoScaling", "UpdateTableReplicaAutoScaling"]
STREAM_OPS = ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords")
ERROR_TYPES = {
    "YD001": "ValidationException", "YD002": "ResourceNotFoundException",
    "YD003": "ResourceInUseException", "YD004": "ConditionalCheckFailedException",
    "YD005": "TransactionCanceledException", "YD006": "TransactionConflictException",
    "YD007": "LimitExceededException", "YD008": "ItemCollectionSizeLimitExceededException",
    "YD009": "ProvisionedThroughputExceededException", "YD010": "RequestLimitExceeded",
    "YD011": "UnknownOperationException", "YD012": "SerializationException",
    "YD013": "AccessDeniedException", "YD014": "IdempotentParameterMismatchException",
    "YD015": "TransactionInProgressException", "YD020": "DuplicateItemException",
}


def load_error_types():
    """The SQLSTATE -> DynamoDB error type table of src/common/errors.c (the one source);
    the table above when the fuzzer runs outside the source tree."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "common", "errors.c")
    try:
        with open(path) as f:
            found = dict((c, t) for t, c in re.findall(r'\{"(\w+)", "(YD\d+)"\}', f.read()))
    except OSError:
        return
    if found:
        ERROR_TYPES.clear()
        ERROR_TYPES.update(found)


load_error_types()
# PartiQL tokens the statement mutator inserts (src/partiql/)
PQ_TOKENS = ["SELECT", "*", "FROM", "WHERE", "AND", "OR", "NOT", "=", "<>", "!=", "<", "<=", ">", ">=", "IN", "BETWEEN",
             "IS", "MISSING", "NULL", "TRUE", "FALSE", "ORDER", "BY", "DESC", "ASC", "INSERT", "INTO", "VALUE", "VALUES",
             "UPDATE", "SET", "REMOVE", "DELETE", "RETURNING", "ALL", "MODIFIED", "OLD", "NEW", "EXISTS", "(", ")", "[",
             "]", "{", "}", "<<", ">>", ",", ".", ":", "?", "'x'", "''", "'", '"', '"t"', "1", "-1", "1e126", "1e-131",
             "1.5e3", "123456789012345678901234567890123456789", "begins_with", "contains", "size", "attribute_type",
             "set_add", "set_delete", "list_append", "missing", "exists", "pk", "sk", "a", "b.c", "d[0]", "m['k']",
             "[99999999999]", "--", "/*", "*/", ";", "#", "value", "pad", "LIKE", "AS", "x", "é", "\t", "+", "-",
             "STRING", "NUMERIC", "TUPLE", "INT4", "DOUBLE PRECISION", "\"a\".\"b\"", "UPSERT"]
# SQL errors the helper functions document (docs/converters.md), not DynamoDB errors
DOCUMENTED_SQL_ERRORS = {("from_plain", "22023")}
# server log lines that are no problem: DynamoDB errors (of sessions that log them),
# shutdowns, a dropped database's worker
LOG_EXPECTED = re.compile(r"^(\w+Exception|RequestLimitExceeded): |terminating .* due to administrator command|"
                          r"^database \d+ does not exist|terminating connection due to administrator command|"
                          r"the database system is (shutting down|starting up|in recovery mode)|"
                          r"terminating connection because of crash of another server process")
SUSPECT = re.compile(r"internal error|unexpected|cache lookup failed|unrecognized|"
                     r"invalid memory alloc|out of memory|assert|could not|"
                     r"null value|unknown node|not supported for type|bogus", re.I)


# DynamoDB's own PartiQL texts that contain SUSPECT words (docs/errors.md)
PQ_EXPECTED = re.compile(r"Statement wasn't well formed, can't be processed: Unexpected "
                         r"(term|keyword|operator|token after expression)|Unrecognized function: ")


class Raw:
    """A JSON number (or other literal) written verbatim, such as 1e400."""
    def __init__(self, text):
        self.text = text


def dumps(v):
    raws = []

    def conv(x):
        if isinstance(x, Raw):
            raws.append(x.text)
            return "\x01RAW%d\x01" % (len(raws) - 1)
        if isinstance(x, dict):
            return {k: conv(y) for k, y in x.items()}
        if isinstance(x, list):
            return [conv(y) for y in x]
        return x
    s = json.dumps(conv(v), separators=(",", ":"))
    if raws:
        s = re.sub(r'"\\u0001RAW(\d+)\\u0001"', lambda m: raws[int(m.group(1))], s)
    return s


# --------------------------------------------------------------------------------
# the scratch tables (per worker prefix)
# --------------------------------------------------------------------------------

def table_specs(prefix):
    """name -> (CreateTable request, key attrs [(name, type)], index dict name->[(attr,type) ...])"""
    P = prefix
    ad = lambda n, t: {"AttributeName": n, "AttributeType": t}
    ks = lambda *pairs: [{"AttributeName": n, "KeyType": k} for n, k in pairs]
    specs = {}
    specs[P + "hash"] = ({
        "TableName": P + "hash", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [ad("pk", "S")], "KeySchema": ks(("pk", "HASH")),
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}},
        [("pk", "S")], {})
    specs[P + "range"] = ({
        "TableName": P + "range", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [ad("pk", "S"), ad("sk", "N"), ad("lsk", "S")],
        "KeySchema": ks(("pk", "HASH"), ("sk", "RANGE")),
        "LocalSecondaryIndexes": [{"IndexName": "lsi1", "KeySchema": ks(("pk", "HASH"), ("lsk", "RANGE")),
                                   "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]}}]},
        [("pk", "S"), ("sk", "N")], {"lsi1": [("pk", "S", "HASH"), ("lsk", "S", "RANGE")]})
    specs[P + "gsi"] = ({
        "TableName": P + "gsi", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [ad("pk", "S"), ad("sk", "S"), ad("gh", "S"), ad("gr", "N"),
                                 ad("a1", "S"), ad("a2", "N"), ad("r1", "S"), ad("r2", "B")],
        "KeySchema": ks(("pk", "HASH"), ("sk", "RANGE")),
        "GlobalSecondaryIndexes": [
            {"IndexName": "gs1", "KeySchema": ks(("gh", "HASH"), ("gr", "RANGE")),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "gma", "KeySchema": ks(("a1", "HASH"), ("a2", "HASH"), ("r1", "RANGE"), ("r2", "RANGE")),
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}},
            {"IndexName": "gsk", "KeySchema": ks(("gh", "HASH")), "Projection": {"ProjectionType": "KEYS_ONLY"}}]},
        [("pk", "S"), ("sk", "S")],
        {"gs1": [("gh", "S", "HASH"), ("gr", "N", "RANGE")],
         "gma": [("a1", "S", "HASH"), ("a2", "N", "HASH"), ("r1", "S", "RANGE"), ("r2", "B", "RANGE")],
         "gsk": [("gh", "S", "HASH")]})
    specs[P + "bin"] = ({
        "TableName": P + "bin", "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        "AttributeDefinitions": [ad("pk", "B"), ad("sk", "B")], "KeySchema": ks(("pk", "HASH"), ("sk", "RANGE"))},
        [("pk", "B"), ("sk", "B")], {})
    specs[P + "num"] = ({
        "TableName": P + "num", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [ad("pk", "N"), ad("gn", "N")], "KeySchema": ks(("pk", "HASH")),
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        "GlobalSecondaryIndexes": [{"IndexName": "gsn", "KeySchema": ks(("gn", "HASH"), ("pk", "RANGE")),
                                    "Projection": {"ProjectionType": "ALL"}}]},
        [("pk", "N")], {"gsn": [("gn", "N", "HASH"), ("pk", "N", "RANGE")]})
    return specs


# --------------------------------------------------------------------------------
# generators
# --------------------------------------------------------------------------------

ATTRS = ["pk", "sk", "a", "b", "c", "lsk", "gh", "gr", "a1", "a2", "r1", "r2", "gn", "lst", "mp", "s", "n"]
WEIRD_NUMBERS = ["0", "-0", "1", "-1", "1.5", "1e125", "9.9999999999999999999999999999999999999E+125",
                 "1e126", "1e-130", "1e-131", "-1e125", "12345678901234567890123456789012345678",
                 "123456789012345678901234567890123456789", "0.0000000000000000000000000000000000001",
                 "abc", "", " 1", "1 ", "+1", "1e", "e1", ".", "-", "1.", ".1", "0x10", "NaN", "Infinity",
                 "1e400", "00001", "1_000", "1,5", "٣"]
RAW_EXTREMES = ["1e400", "-1e400", "1e-400", "9223372036854775808", "-9223372036854775809",
                "2147483648", "-2147483649", "4294967296", "0.5", "-0", "1.0", "1E2",
                "123456789012345678901234567890"]


class Gen:
    def __init__(self, rng, prefix, mutate_rate=0.9):
        self.r = rng
        self.mutate_rate = mutate_rate
        self.helper_rate = 0.04
        self.pool_keys = []
        self.streams = []       # stream ARNs, shard ids, iterators and sequence numbers seen
        self.shards = []
        self.iterators = []
        self.seqs = []
        self.fr = random.Random(1)
        self.P = prefix
        self.specs = table_specs(prefix)
        self.tables = list(self.specs)
        self.pq_pool = []                          # (PartiQL text, number of parameters) used lately

    # ---- primitive values
    def rstr(self, n=None):
        r = self.r
        if n is None:
            n = r.choice([0, 1, 1, 2, 3, 5, 8, 20])
        alpha = r.choice(["abc", "abcdefghijklmnopqrstuvwxyz0123456789", "#:.[]()_- ,",
                          "aé中😀\t\n\"\\/", "AZaz09"])
        return "".join(r.choice(alpha) for _ in range(n))

    def other_json(self):
        r = self.r
        c = r.randrange(24)
        return [None, True, False, 0, -1, 1, Raw(r.choice(RAW_EXTREMES)), "", "x" * r.choice([70000, 1025, 256, 65536]),
                [], {}, [[[[]]]], {"a": {"b": {}}}, "x", 1.5, [1, "a", None], {"S": "x"},
                [{}], [[]], {"": ""}, "null", "true", self.rstr(), self.deep(r.choice([20, 40, 200]))][c]

    def deep(self, n):
        v = {}
        for _ in range(n):
            v = {"a": v} if self.r.random() < 0.5 else [v]
        return v

    def num(self):
        r = self.r
        if r.random() < 0.2:
            return r.choice(WEIRD_NUMBERS)
        return str(r.choice([r.randrange(-5, 20), round(r.uniform(-1e6, 1e6), r.randrange(0, 6))]))

    def b64(self, n=None):
        if n is None:
            n = self.r.choice([0, 1, 2, 3, 5, 16])
        return base64.b64encode(bytes(self.r.randrange(256) for _ in range(n))).decode()

    def av(self, depth=0, typ=None):
        r = self.r
        t = typ or r.choice(["S", "S", "N", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"])
        if depth > 3 and t in ("L", "M"):
            t = "S"
        if t == "S":
            return {"S": self.rstr(r.choice([1, 2, 3, 5]))}
        if t == "N":
            return {"N": str(r.randrange(-5, 20)) if r.random() < 0.8 else self.num()}
        if t == "B":
            return {"B": self.b64(r.choice([1, 2, 4]))}
        if t == "BOOL":
            return {"BOOL": r.random() < 0.5}
        if t == "NULL":
            return {"NULL": True}
        if t == "L":
            return {"L": [self.av(depth + 1) for _ in range(r.randrange(4))]}
        if t == "M":
            return {"M": {r.choice(ATTRS): self.av(depth + 1) for _ in range(r.randrange(4))}}
        if t == "SS":
            return {"SS": list({self.rstr(2) or "z" for _ in range(r.randrange(1, 4))})}
        if t == "NS":
            return {"NS": list({str(r.randrange(100)) for _ in range(r.randrange(1, 4))})}
        return {"BS": list({self.b64(r.randrange(1, 4)) for _ in range(r.randrange(1, 4))})}

    def bad_av(self):
        r = self.r
        c = r.randrange(40)
        opts = [
            lambda: {"S": 1}, lambda: {"S": None}, lambda: {"N": "abc"}, lambda: {"N": 1},
            lambda: {"N": r.choice(WEIRD_NUMBERS)}, lambda: {"SS": []}, lambda: {"NS": []}, lambda: {"BS": []},
            lambda: {"SS": ["a", "a"]}, lambda: {"NS": ["1", "1.0"]}, lambda: {"NS": ["x"]}, lambda: {"BS": ["!!"]},
            lambda: {"L": {}}, lambda: {"M": []}, lambda: {"L": [1]}, lambda: {"M": {"a": 1}},
            lambda: {"S": "a", "N": "1"}, lambda: {"X": "a"}, lambda: {}, lambda: [], lambda: "str",
            lambda: None, lambda: {"B": "!!"}, lambda: {"B": "abc"}, lambda: {"B": 5}, lambda: {"BOOL": "true"},
            lambda: {"NULL": False}, lambda: {"NULL": "x"}, lambda: {"M": {"": {"S": "x"}}},
            lambda: {"N": ""}, lambda: {"S": ""}, lambda: {"B": ""},
            lambda: self.deep_av(r.choice([31, 32, 33, 40, 100, 300])),
            lambda: {"L": [self.bad_av()]}, lambda: {"M": {"a": self.bad_av()}},
            lambda: {"SS": [1, 2]}, lambda: {"SS": "a"}, lambda: {"s": "lower"},
            lambda: {"S": "x" * r.choice([400 * 1024, 70000])}, lambda: {"NS": [r.choice(WEIRD_NUMBERS), "1"]},
        ]
        return opts[c % len(opts)]()

    def deep_av(self, n):
        v = {"S": "x"}
        for _ in range(n):
            v = {"L": [v]} if self.r.random() < 0.5 else {"M": {"a": v}}
        return v

    # ---- tables, keys, items
    def table(self):
        r = self.r
        if r.random() < 0.03:
            return r.choice(["", "ab", "no_such_table", "x" * 256, "bad name!", self.P + "tmp1", 5])
        return r.choice(self.tables)

    def remember(self, pool, v, cap=50):
        if isinstance(v, str) and v and v not in pool:
            if len(pool) >= cap:
                pool[self.fr.randrange(cap)] = v
            else:
                pool.append(v)

    def feed_stream(self, resp):
        """Remember the stream ARNs, shard ids, iterators and sequence numbers of a response."""
        if not isinstance(resp, dict):
            return
        td = resp.get("TableDescription") or resp.get("Table") or {}
        if isinstance(td, dict):
            self.remember(self.streams, td.get("LatestStreamArn"))
        for st in resp.get("Streams") or []:
            if isinstance(st, dict):
                self.remember(self.streams, st.get("StreamArn"))
        sd = resp.get("StreamDescription")
        if isinstance(sd, dict):
            for sh in sd.get("Shards") or []:
                if isinstance(sh, dict):
                    self.remember(self.shards, sh.get("ShardId"))
                    rng = sh.get("SequenceNumberRange") or {}
                    self.remember(self.seqs, rng.get("StartingSequenceNumber"))
        self.remember(self.iterators, resp.get("ShardIterator"))
        self.remember(self.iterators, resp.get("NextShardIterator"))
        for rec in (resp.get("Records") or [])[:3]:
            if isinstance(rec, dict) and isinstance(rec.get("dynamodb"), dict):
                self.remember(self.seqs, rec["dynamodb"].get("SequenceNumber"))

    def feed(self, resp):
        """Remember keys and items of a response (--feedback): later requests reuse them anywhere."""
        if not isinstance(resp, dict):
            return
        found = []
        for k in ("LastEvaluatedKey", "Item", "Attributes"):
            if isinstance(resp.get(k), dict):
                found.append(resp[k])
        for it in (resp.get("Items") or [])[:3]:
            found.append(it)
        for v in (resp.get("Responses") or {}).values() if isinstance(resp.get("Responses"), dict) else []:
            found.extend(v[:2])
        for f in found:
            if isinstance(f, dict) and f:
                if len(self.pool_keys) >= 300:
                    self.pool_keys[self.fr.randrange(300)] = f
                else:
                    self.pool_keys.append(f)

    def key_for(self, t, valid=True):
        if self.pool_keys and self.r.random() < 0.1:
            return copy.deepcopy(self.r.choice(self.pool_keys))
        spec = self.specs.get(t)
        if spec is None:
            return {"pk": self.av(typ="S")}
        key = {}
        for name, typ in spec[1]:
            key[name] = self.key_value(typ)
        if not valid or self.r.random() < 0.05:
            self.spoil_key(key)
        return key

    VALID_NUMBERS = ["0", "-0", "0.0", "1e125", "-1e125", "9.9999999999999999999999999999999999999E+125",
                     "-9.9999999999999999999999999999999999999E+125", "1e-130", "-1e-130", "12345678901234567890123456789012345678",
                     "0.00000000000000000000000000000000000001", "100", "1E2", "1.000", "-0.5", "5e-1"]

    def key_value(self, typ):
        r = self.r
        if r.random() < 0.08:     # edge values of every key type
            if typ == "S":
                return {"S": r.choice(["", "\u00ff", "a" * r.choice([1024, 1025, 2048, 2049]), "\x7f", "😀", "a\x01"])}
            if typ == "N":
                return {"N": r.choice(self.VALID_NUMBERS)}
            return {"B": self.b64(r.choice([0, 1, 3, 1024, 1025, 2048, 2049]))}
        if typ == "S":
            return {"S": "k%d" % r.randrange(8)}
        if typ == "N":
            return {"N": str(r.randrange(8))}
        return {"B": base64.b64encode(bytes([r.randrange(4)])).decode()}

    def spoil_key(self, key):
        r = self.r
        c = r.randrange(6)
        if c == 0 and key:
            del key[r.choice(list(key))]
        elif c == 1:
            key[r.choice(ATTRS)] = self.av()
        elif c == 2 and key:
            key[r.choice(list(key))] = self.av()
        elif c == 3 and key:
            key[r.choice(list(key))] = self.bad_av()
        elif c == 4 and key:
            key[r.choice(list(key))] = r.choice([{"S": ""}, {"B": ""}, {"S": "x" * 2049}, {"B": self.b64(1025)}])
        else:
            key.clear()

    def item_for(self, t):
        r = self.r
        if self.pool_keys and r.random() < 0.1:
            return copy.deepcopy(r.choice(self.pool_keys))
        item = self.key_for(t, valid=r.random() > 0.05)
        spec = self.specs.get(t)
        if spec:
            for idx in spec[2].values():
                for a in idx:
                    if r.random() < 0.7:
                        item[a[0]] = self.key_value(a[1]) if r.random() < 0.9 else self.av()
        for _ in range(r.randrange(4)):
            item[r.choice(ATTRS[2:])] = self.av()
        if r.random() < 0.01:     # items near DynamoDB's 400 KB limit
            item[r.choice(["a", "b", "c"])] = {"S": "x" * r.choice([300000, 399000, 409600, 410000])}
        if r.random() < 0.01:
            item.update({"x%d" % i: {"N": str(i)} for i in range(r.choice([100, 1000]))})
        if r.random() < 0.05:
            item[r.choice(ATTRS)] = self.bad_av()
        return item

    # ---- expressions
    def path(self, names):
        r = self.r
        if r.random() < 0.3:
            ph = "#" + r.choice(["n", "m", "p", "status", "x1"])
            names[ph] = r.choice(ATTRS + ["status", "a.b", "", "size"])
            p = ph
        else:
            p = r.choice(ATTRS + ["status", "size", "AND"] if r.random() < 0.1 else ATTRS)
        while r.random() < 0.25:
            p += r.choice([".x", "[0]", "[1]", ".a", "[2]", ".b"] * 5 + ["[99999999999]", "[-1]"])
        return p

    def value(self, vals):
        r = self.r
        ph = ":" + r.choice(["v", "w", "x", "y", "z", "v1", "list", "n"])
        if r.random() < 0.95:
            vals[ph] = self.av() if r.random() < 0.95 else self.bad_av()
        return ph

    def operand(self, names, vals, update=False):
        r = self.r
        c = r.random()
        if c < 0.45:
            return self.path(names)
        if c < 0.9 or update:
            return self.value(vals)
        return "size(%s)" % self.path(names)

    def condition(self, names, vals, depth=0):
        r = self.r
        c = r.randrange(12 if depth < 3 else 8)
        o = lambda: self.operand(names, vals)
        if c < 3:
            return "%s %s %s" % (o(), r.choice(["=", "<>", "<", "<=", ">", ">="]), o())
        if c == 3:
            return "%s BETWEEN %s AND %s" % (o(), o(), o())
        if c == 4:
            return "%s IN (%s)" % (o(), ", ".join(o() for _ in range(r.randrange(1, 5))))
        if c == 5:
            return "%s(%s)" % (r.choice(["attribute_exists", "attribute_not_exists"]), self.path(names))
        if c == 6:
            return "attribute_type(%s, %s)" % (self.path(names), self.value(vals))
        if c == 7:
            return "%s(%s, %s)" % (r.choice(["begins_with", "contains"]), o(), o())
        if c == 8:
            return "NOT " + self.condition(names, vals, depth + 1)
        if c == 9:
            return "(%s)" % self.condition(names, vals, depth + 1)
        return "%s %s %s" % (self.condition(names, vals, depth + 1), r.choice(["AND", "OR"]),
                             self.condition(names, vals, depth + 1))

    def update(self, names, vals):
        r = self.r
        clauses = []
        free = [a for a in ATTRS if a not in ("pk", "sk")]
        r.shuffle(free)

        def target():   # distinct top-level attributes: paths that do not overlap
            if r.random() < 0.1 or not free:
                return self.path(names)
            p = free.pop()
            while r.random() < 0.2:
                p += r.choice([".x", "[0]", ".a"])
            return p
        for kw in r.sample(["SET", "REMOVE", "ADD", "DELETE"], r.randrange(1, 5)):
            acts = []
            for _ in range(r.randrange(1, 4)):
                if kw == "SET":
                    o = lambda: self.operand(names, vals, True)
                    rhs = r.choice([
                        lambda: o(),
                        lambda: "%s %s %s" % (o(), r.choice("+-"), o()),
                        lambda: "list_append(%s, %s)" % (o(), o()),
                        lambda: "if_not_exists(%s, %s)" % (self.path(names), o())])()
                    acts.append("%s = %s" % (target(), rhs))
                elif kw == "REMOVE":
                    acts.append(target())
                else:
                    acts.append("%s %s" % (target(), self.value(vals)))
            clauses.append(kw + " " + ", ".join(acts))
        return " ".join(clauses)

    def projection(self, names):
        if self.r.random() < 0.2:
            return ", ".join(self.path(names) for _ in range(self.r.randrange(1, 5)))
        return ", ".join(self.r.sample([a for a in ATTRS], self.r.randrange(1, 5)))

    def key_condition(self, t, index, names, vals):
        """A (mostly) valid key condition for the table or index."""
        r = self.r
        spec = self.specs.get(t)
        if spec is None:
            return "pk = :v"
        if index and index in spec[2]:
            attrs = spec[2][index]
        else:
            attrs = [(n, ty, "HASH" if i == 0 else "RANGE") for i, (n, ty) in enumerate(spec[1])]
        parts = []
        ranges = [a for a in attrs if a[2] == "RANGE"]
        for a in attrs:
            if a[2] != "HASH":
                continue
            ph = ":h%s" % a[0]
            vals[ph] = self.key_value(a[1])
            parts.append("%s = %s" % (a[0], ph))
        nr = r.randrange(len(ranges) + 1)
        for i, a in enumerate(ranges[:nr]):
            ph = ":r%s" % a[0]
            vals[ph] = self.key_value(a[1])
            if i == nr - 1:
                op = r.choice(["=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"])
                if op == "BETWEEN":
                    vals[ph + "b"] = self.key_value(a[1])
                    parts.append("%s BETWEEN %s AND %sb" % (a[0], ph, ph))
                elif op == "begins_with":
                    parts.append("begins_with(%s, %s)" % (a[0], ph))
                else:
                    parts.append("%s %s %s" % (a[0], op, ph))
            else:
                parts.append("%s = %s" % (a[0], ph))
        r.shuffle(parts)
        if r.random() < 0.1:
            parts = ["(" + p + ")" for p in parts]
        return " AND ".join(parts)

    def legacy_conditions(self, t, index, key=True):
        r = self.r
        conds = {}
        spec = self.specs.get(t)
        attrs = [a[0] for a in (spec[2].get(index) if spec and index in spec[2] else
                                [(n, ty) for n, ty in (spec[1] if spec else [("pk", "S")])])]
        if not key:
            attrs = [r.choice(ATTRS) for _ in range(r.randrange(0, 4))]
        for a in attrs:
            if r.random() < 0.85:
                op = r.choice(["EQ", "EQ", "LT", "LE", "GT", "GE", "BETWEEN", "BEGINS_WITH", "NE", "IN",
                               "NULL", "NOT_NULL", "CONTAINS", "NOT_CONTAINS", "XX", ""])
                n = {"BETWEEN": 2, "IN": r.randrange(0, 4), "NULL": 0, "NOT_NULL": 0}.get(op, 1)
                if r.random() < 0.1:
                    n = r.randrange(0, 4)
                c = {"ComparisonOperator": op}
                if n or r.random() < 0.2:
                    c["AttributeValueList"] = [self.av() for _ in range(n)]
                conds[a] = c
        return conds

    def exprs(self, req, kinds):
        """Add expressions of the given kinds (condition, filter, projection, update) to req."""
        names, vals = {}, {}
        for k in kinds:
            if k == "update":
                req["UpdateExpression"] = self.update(names, vals)
            elif k == "projection":
                req["ProjectionExpression"] = self.projection(names)
            else:
                req[{"condition": "ConditionExpression", "filter": "FilterExpression"}[k]] = self.condition(names, vals)
        if names and self.r.random() < 0.97:
            req["ExpressionAttributeNames"] = names
        if vals and self.r.random() < 0.97:
            req["ExpressionAttributeValues"] = vals
        if self.r.random() < 0.05:
            req["ExpressionAttributeNames"] = dict(names, **{"#unused": "u"})
        return req

    def opt(self, req):
        r = self.r
        if r.random() < 0.2:
            req["ReturnConsumedCapacity"] = r.choice(["INDEXES", "TOTAL", "NONE"] * 5 + ["indexes", "", "ALL"])
        return req

    def gsi_def(self, name=None):
        r = self.r
        hashn = r.choice([1, 1, 2, 4])
        rangen = r.choice([0, 1, 2, 4])
        attrs = r.sample(["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "gh", "gr"], hashn + rangen)
        ks = [{"AttributeName": a, "KeyType": "HASH"} for a in attrs[:hashn]] + \
             [{"AttributeName": a, "KeyType": "RANGE"} for a in attrs[hashn:]]
        proj = r.choice([{"ProjectionType": "ALL"}, {"ProjectionType": "KEYS_ONLY"},
                         {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}])
        g = {"IndexName": name or "gsx%d" % r.randrange(4), "KeySchema": ks, "Projection": proj}
        defs = [{"AttributeName": a, "AttributeType": r.choice("SNB")} for a in attrs]
        return g, defs

    # ---- one seed request per operation
    def seed(self, op):
        r = self.r
        P = self.P
        if op == "CreateTable":
            name = P + "c%d" % r.randrange(6)
            hk = r.choice(["S", "N", "B"])
            req = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                   "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": hk}],
                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
            if r.random() < 0.6:
                req["AttributeDefinitions"].append({"AttributeName": "sk", "AttributeType": r.choice("SNB")})
                req["KeySchema"].append({"AttributeName": "sk", "KeyType": "RANGE"})
                if r.random() < 0.4:
                    req["AttributeDefinitions"].append({"AttributeName": "l1", "AttributeType": "S"})
                    req["LocalSecondaryIndexes"] = [{"IndexName": "lsi1", "KeySchema": [
                        {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l1", "KeyType": "RANGE"}],
                        "Projection": {"ProjectionType": r.choice(["ALL", "KEYS_ONLY"])}}]
            if r.random() < 0.5:
                gs = []
                for i in range(r.choice([1, 1, 2, 21])):
                    g, defs = self.gsi_def("gs%d" % i)
                    gs.append(g)
                    for d in defs:
                        if all(x["AttributeName"] != d["AttributeName"] for x in req["AttributeDefinitions"]):
                            req["AttributeDefinitions"].append(d)
                req["GlobalSecondaryIndexes"] = gs
            if r.random() < 0.2:
                req["BillingMode"] = "PROVISIONED"
                req["ProvisionedThroughput"] = {"ReadCapacityUnits": r.choice([1, 0, -1, 5]), "WriteCapacityUnits": 1}
            if r.random() < 0.1:
                req["Tags"] = [{"Key": "k", "Value": "v"}]
            return req
        if op == "DescribeTable":
            return {"TableName": self.table() if r.random() < 0.8 else P + "c%d" % r.randrange(6)}
        if op == "ListTables":
            req = {}
            if r.random() < 0.5:
                req["Limit"] = r.choice([1, 2, 100, 0, 101])
            if r.random() < 0.5:
                req["ExclusiveStartTableName"] = r.choice(self.tables + ["", "zzz", "a" * 300])
            return req
        if op == "DeleteTable":
            return {"TableName": P + "c%d" % r.randrange(6) if r.random() < 0.9 else self.table()}
        if op == "UpdateTable":
            t = P + "c%d" % r.randrange(6) if r.random() < 0.7 else self.table()
            req = {"TableName": t}
            c = r.randrange(5)
            if c == 0:
                g, defs = self.gsi_def()
                req["AttributeDefinitions"] = defs
                req["GlobalSecondaryIndexUpdates"] = [{"Create": g}]
            elif c == 1:
                req["GlobalSecondaryIndexUpdates"] = [{"Delete": {"IndexName": r.choice(["gs0", "gs1", "gsx0", "gma", "gsk"])}}]
            elif c == 2:
                req["GlobalSecondaryIndexUpdates"] = [{"Update": {"IndexName": r.choice(["gs0", "gs1", "gma"]),
                                                                  "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}}]
            elif c == 3:
                req["BillingMode"] = r.choice(["PAY_PER_REQUEST", "PROVISIONED"])
                if req["BillingMode"] == "PROVISIONED":
                    req["ProvisionedThroughput"] = {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}
            else:
                req["ProvisionedThroughput"] = {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}
            return req
        t = self.table()
        if op == "PutItem":
            req = {"TableName": t, "Item": self.item_for(t)}
            if r.random() < 0.4:
                self.exprs(req, ["condition"])
            elif r.random() < 0.1:
                req["Expected"] = self.legacy_conditions(t, None, key=False)
                if r.random() < 0.5:
                    req["ConditionalOperator"] = r.choice(["AND", "OR", "XOR"])
            if r.random() < 0.3:
                req["ReturnValues"] = r.choice(["ALL_OLD", "NONE", "ALL_NEW", "UPDATED_OLD", "x"])
            if r.random() < 0.1:
                req["ReturnItemCollectionMetrics"] = r.choice(["SIZE", "NONE", "x"])
            if r.random() < 0.1:
                req["ReturnValuesOnConditionCheckFailure"] = r.choice(["ALL_OLD", "NONE", "x"])
            return self.opt(req)
        if op == "GetItem":
            req = {"TableName": t, "Key": self.key_for(t)}
            if r.random() < 0.4:
                self.exprs(req, ["projection"])
            elif r.random() < 0.1:
                req["AttributesToGet"] = r.sample(ATTRS, r.randrange(0, 4))
            if r.random() < 0.2:
                req["ConsistentRead"] = r.random() < 0.5
            return self.opt(req)
        if op == "DeleteItem":
            req = {"TableName": t, "Key": self.key_for(t)}
            if r.random() < 0.4:
                self.exprs(req, ["condition"])
            if r.random() < 0.3:
                req["ReturnValues"] = r.choice(["ALL_OLD", "NONE", "ALL_NEW"])
            return self.opt(req)
        if op == "UpdateItem":
            req = {"TableName": t, "Key": self.key_for(t)}
            if r.random() < 0.85:
                self.exprs(req, ["update"] + (["condition"] if r.random() < 0.3 else []))
            else:
                req["AttributeUpdates"] = {r.choice(ATTRS): dict(
                    [("Action", r.choice(["PUT", "ADD", "DELETE", "x"]))] +
                    ([("Value", self.av())] if r.random() < 0.8 else [])) for _ in range(r.randrange(0, 3))}
            if r.random() < 0.4:
                req["ReturnValues"] = r.choice(["ALL_OLD", "NONE", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"])
            return self.opt(req)
        if op == "BatchGetItem":
            ri = {}
            for tt in r.sample(self.tables, r.randrange(1, 3)):
                e = {"Keys": [self.key_for(tt) for _ in range(r.choice([1, 2, 3, 5, 100, 101]) if r.random() < 0.2 else r.randrange(1, 4))]}
                if r.random() < 0.3:
                    self.exprs(e, ["projection"])
                ri[tt] = e
            return self.opt({"RequestItems": ri})
        if op == "BatchWriteItem":
            ri = {}
            for tt in r.sample(self.tables, r.randrange(1, 3)):
                n = r.choice([1, 2, 25, 26, 0]) if r.random() < 0.2 else r.randrange(1, 4)
                ri[tt] = [({"PutRequest": {"Item": self.item_for(tt)}} if r.random() < 0.6 else
                           {"DeleteRequest": {"Key": self.key_for(tt)}}) for _ in range(n)]
            return self.opt({"RequestItems": ri})
        if op in ("Query", "Scan"):
            spec = self.specs.get(t)
            idx = None
            if spec and spec[2] and r.random() < 0.5:
                idx = r.choice(list(spec[2]))
            req = {"TableName": t}
            if idx:
                req["IndexName"] = idx
            names, vals = {}, {}
            if op == "Query":
                if r.random() < 0.85:
                    req["KeyConditionExpression"] = self.key_condition(t, idx, names, vals)
                else:
                    req["KeyConditions"] = self.legacy_conditions(t, idx)
            if r.random() < 0.3:
                if "KeyConditions" in req or r.random() < 0.2:
                    req["QueryFilter" if op == "Query" else "ScanFilter"] = self.legacy_conditions(t, idx, key=False)
                    if r.random() < 0.3:
                        req["ConditionalOperator"] = r.choice(["AND", "OR"])
                else:
                    req["FilterExpression"] = self.condition(names, vals)
            if r.random() < 0.3:
                req["ProjectionExpression"] = self.projection(names)
            if names:
                req["ExpressionAttributeNames"] = names
            if vals:
                req["ExpressionAttributeValues"] = vals
            if r.random() < 0.3:
                req["Limit"] = r.choice([1, 2, 3, 10])
            if r.random() < 0.2:
                req["Select"] = r.choice(["ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", "COUNT", "SPECIFIC_ATTRIBUTES", "x"])
            if r.random() < 0.1:
                req["ConsistentRead"] = r.random() < 0.5
            if op == "Query" and r.random() < 0.2:
                req["ScanIndexForward"] = r.random() < 0.5
            if op == "Scan" and r.random() < 0.2:
                ts = r.choice([1, 2, 4, 1000000])
                req["TotalSegments"] = ts
                req["Segment"] = r.randrange(min(ts, 5))
            if r.random() < 0.25:
                k = self.key_for(t)
                if idx and spec:
                    for a in spec[2][idx]:
                        k[a[0]] = self.key_value(a[1])
                req["ExclusiveStartKey"] = k
                if self.pool_keys and r.random() < 0.5:
                    req["ExclusiveStartKey"] = copy.deepcopy(r.choice(self.pool_keys))
            return self.opt(req)
        if op == "TransactWriteItems":
            items = []
            n = r.choice([0, 1, 2, 3, 26, 101]) if r.random() < 0.15 else r.randrange(1, 5)
            for _ in range(n):
                tt = self.table()
                k = r.randrange(4)
                if k == 0:
                    e = {"Put": {"TableName": tt, "Item": self.item_for(tt)}}
                    if r.random() < 0.3:
                        self.exprs(e["Put"], ["condition"])
                elif k == 1:
                    e = {"Delete": {"TableName": tt, "Key": self.key_for(tt)}}
                    if r.random() < 0.3:
                        self.exprs(e["Delete"], ["condition"])
                elif k == 2:
                    e = {"Update": self.exprs({"TableName": tt, "Key": self.key_for(tt)},
                                              ["update"] + (["condition"] if r.random() < 0.3 else []))}
                else:
                    e = {"ConditionCheck": self.exprs({"TableName": tt, "Key": self.key_for(tt)}, ["condition"])}
                if r.random() < 0.1:
                    list(e.values())[0]["ReturnValuesOnConditionCheckFailure"] = r.choice(["ALL_OLD", "NONE"])
                items.append(e)
            if items and r.random() < 0.1:
                items.append(copy.deepcopy(r.choice(items)))
            req = {"TransactItems": items}
            if r.random() < 0.1:
                req["ClientRequestToken"] = r.choice(["tok1", "tok2", "", "x" * 37])
            if r.random() < 0.1:
                req["ReturnItemCollectionMetrics"] = "SIZE"
            return self.opt(req)
        if op == "TransactGetItems":
            items = []
            n = r.choice([0, 1, 26, 101, 100]) if r.random() < 0.15 else r.randrange(1, 5)
            for _ in range(n):
                tt = self.table()
                e = {"Get": {"TableName": tt, "Key": self.key_for(tt)}}
                if r.random() < 0.3:
                    self.exprs(e["Get"], ["projection"])
                items.append(e)
            if items and r.random() < 0.1:
                items.append(copy.deepcopy(r.choice(items)))
            return self.opt({"TransactItems": items})
        if op == "ExecuteStatement":
            req = self.pq_entry()
            if r.random() < 0.3:
                req["Limit"] = r.choice([1, 2, 5, 0, 100])
            if r.random() < 0.2:
                req["ConsistentRead"] = r.random() < 0.5
            if r.random() < 0.1:
                req["NextToken"] = r.choice(["x", "eyJoIjoxLCJxIjowLCJrIjpudWxsfQ==", base64.b64encode(os.urandom(20)).decode(),
                                             base64.b64encode(b'{"h":1,"q":99,"k":{"pk":{"S":"a"}}}').decode()])
            return self.opt(req)
        if op == "BatchExecuteStatement":
            n = r.choice([0, 1, 26]) if r.random() < 0.1 else r.randrange(1, 5)
            return self.opt({"Statements": [self.pq_entry(batch=True) for _ in range(n)]})
        if op in STREAM_OPS:
            return self.stream_seed(op)
        if op == "ExportTableToPointInTime":
            # the fuzz tables have no point-in-time recovery: valid requests end there, no job starts
            arn = "arn:aws:dynamodb:us-east-1:000000000000:table/%s" % self.table()
            req = {"TableArn": arn if r.random() < 0.9 else self.table(), "S3Bucket": r.choice(["fuzz-bucket", "b", "-x-"])}
            for k, vals in (("ExportFormat", ["DYNAMODB_JSON", "ION", "CSV"]), ("ExportType", ["FULL_EXPORT", "INCREMENTAL_EXPORT"]),
                            ("S3Prefix", ["p", "", "a/../b"]), ("ClientToken", ["t1", "$", ""]),
                            ("S3BucketOwner", ["000000000000", "1"]), ("S3SseAlgorithm", ["AES256", "KMS", "X"]),
                            ("ExportTime", [0, 1.5, -1, 1e12, 2 ** 63, "now"])):
                if r.random() < 0.3:
                    req[k] = r.choice(vals)
            if r.random() < 0.3:
                req["IncrementalExportSpecification"] = {"ExportFromTime": r.choice([0, 1e9, -5, "x"]),
                                                         "ExportToTime": r.choice([1e9 + 900, 2e9, None]),
                                                         "ExportViewType": r.choice(["NEW_IMAGE", "NEW_AND_OLD_IMAGES", "OLD"])}
            return req
        if op == "DescribeExport":
            return {"ExportArn": r.choice(["arn:aws:dynamodb:us-east-1:000000000000:table/%s/export/01234567890123-abcdef01" % self.table(),
                                           "arn:aws:dynamodb:us-east-1:000000000000:table/x", "short"])}
        if op == "ListExports":
            req = {}
            if r.random() < 0.5:
                req["MaxResults"] = r.choice([1, 25, 0, 26])
            if r.random() < 0.3:
                req["NextToken"] = r.choice(["1", "-1", "x", "99999999999999999999"])
            if r.random() < 0.3:
                req["TableArn"] = "arn:aws:dynamodb:us-east-1:000000000000:table/%s" % self.table()
            return req
        if op in ("CreateGlobalTable", "DescribeGlobalTable", "UpdateGlobalTable",
                  "DescribeGlobalTableSettings", "UpdateGlobalTableSettings"):
            req = {"GlobalTableName": self.table()} if r.random() < 0.9 else {}
            regions = [r.choice(["us-east-1", "eu-west-1", "nowhere-1", "", None, 5])
                       for _ in range(r.choice([0, 1, 2, 11]))]
            if op == "CreateGlobalTable":
                req["ReplicationGroup"] = [{"RegionName": g} for g in regions]
            elif op == "UpdateGlobalTable":
                req["ReplicaUpdates"] = [{r.choice(["Create", "Delete", "Update"]): {"RegionName": g}} for g in regions]
            elif op == "UpdateGlobalTableSettings":
                if r.random() < 0.5:
                    req["GlobalTableBillingMode"] = r.choice(["PROVISIONED", "PAY_PER_REQUEST", "x"])
                if r.random() < 0.5:
                    req["ReplicaSettingsUpdate"] = [{"RegionName": g, "ReplicaProvisionedReadCapacityUnits": r.choice([0, 1, -5])}
                                                    for g in regions]
                if r.random() < 0.3:
                    req["GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate"] = self.autoscaling_update()
            return req
        if op == "ListGlobalTables":
            req = {}
            if r.random() < 0.5:
                req["Limit"] = r.choice([1, 100, 0, -1, "1"])
            if r.random() < 0.3:
                req["ExclusiveStartGlobalTableName"] = r.choice(["", "ab", "lg_t", "a" * 300])
            if r.random() < 0.3:
                req["RegionName"] = r.choice(["us-east-1", "nowhere-1", ""])
            return req
        if op == "DescribeTableReplicaAutoScaling":
            return {"TableName": self.table()}
        if op == "UpdateTableReplicaAutoScaling":
            req = {"TableName": self.table()}
            if r.random() < 0.6:
                req["ProvisionedWriteCapacityAutoScalingUpdate"] = self.autoscaling_update()
            if r.random() < 0.4:
                req["ReplicaUpdates"] = [{"RegionName": r.choice(["us-east-1", "eu-west-1", None]),
                                          "ReplicaProvisionedReadCapacityAutoScalingUpdate": self.autoscaling_update(),
                                          "ReplicaGlobalSecondaryIndexUpdates": [
                                              {"IndexName": r.choice(["gs0", "nope", "ab"]),
                                               "ProvisionedReadCapacityAutoScalingUpdate": self.autoscaling_update()}]}
                                         for _ in range(r.choice([0, 1, 2]))]
            if r.random() < 0.3:
                req["GlobalSecondaryIndexUpdates"] = [{"IndexName": r.choice(["gs0", "nope"]),
                                                       "ProvisionedWriteCapacityAutoScalingUpdate": self.autoscaling_update()}]
            return req
        if op == "ExecuteTransaction":
            n = r.choice([0, 1, 101]) if r.random() < 0.1 else r.randrange(1, 5)
            req = {"TransactStatements": [self.pq_entry() for _ in range(n)]}
            if r.random() < 0.1:
                req["ClientRequestToken"] = r.choice(["tok1", "tok2", ""])
            return self.opt(req)
        raise ValueError(op)

    def autoscaling_update(self):
        """An AutoScalingSettingsUpdate: disabling, enabling, or something in between."""
        r = self.r
        u = {}
        if r.random() < 0.6:
            u["AutoScalingDisabled"] = r.choice([True, False, "x"])
        if r.random() < 0.5:
            u["MinimumUnits"] = r.choice([1, 0, 5])
        if r.random() < 0.5:
            u["MaximumUnits"] = r.choice([1, 10, -1])
        if r.random() < 0.4:
            u["ScalingPolicyUpdate"] = {"TargetTrackingScalingPolicyConfiguration": r.choice([{}, {"TargetValue": 70}, {"TargetValue": "x"}])}
        return u

    # ---- Streams API (iterators are parsed and verified by src/streams/)
    def stream_arn(self):
        r = self.r
        if self.streams and r.random() < 0.85:
            arn = r.choice(self.streams)
            if r.random() < 0.15:
                arn = r.choice([arn[:-1], arn + "x", arn.replace("stream/", "stream//"), arn.upper(),
                                arn.replace(":table/", ":table/" + self.P + "nope"), arn.split("/stream/")[0]])
            return arn
        return r.choice(["", "x", "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2020-01-01T00:00:00.000",
                         "arn:aws:dynamodb:::table/", "a" * 2000, self.rstr()])

    def iterator(self):
        r = self.r
        if self.iterators and r.random() < 0.8:
            it = r.choice(self.iterators)
            k = r.random()
            if k < 0.1:     # one character changed: the signature must not verify
                i = r.randrange(len(it))
                it = it[:i] + r.choice("AZaz09+/=|:.") + it[i + 1:]
            elif k < 0.15:
                it = it[:r.randrange(len(it))]
            elif k < 0.2:
                it = it + r.choice(["=", "x", "|1", it])
            return it
        return r.choice(["", "x", base64.b64encode(os.urandom(r.choice([1, 16, 64, 300]))).decode(),
                         "a" * 3000, "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x|1|2", "\u00e9" * 10])

    def stream_seed(self, op):
        r = self.r
        if op == "ListStreams":
            req = {}
            if r.random() < 0.6:
                req["TableName"] = self.table()
            if r.random() < 0.3:
                req["Limit"] = r.choice([1, 2, 100, 0, 101, -1])
            if r.random() < 0.2:
                req["ExclusiveStartStreamArn"] = self.stream_arn()
            return req
        if op == "DescribeStream":
            req = {"StreamArn": self.stream_arn()}
            if r.random() < 0.3:
                req["Limit"] = r.choice([1, 2, 100, 0, 101, -1])
            if r.random() < 0.2:
                req["ExclusiveStartShardId"] = r.choice(self.shards) if self.shards else self.rstr()
            return req
        if op == "GetShardIterator":
            typ = r.choice(["TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "trim_horizon", ""])
            req = {"StreamArn": self.stream_arn(),
                   "ShardId": r.choice(self.shards) if self.shards and r.random() < 0.85 else self.rstr(),
                   "ShardIteratorType": typ}
            if "SEQUENCE" in typ or r.random() < 0.1:
                req["SequenceNumber"] = (r.choice(self.seqs) if self.seqs and r.random() < 0.7 else
                                         r.choice(["0", "-1", "1" * 40, "1" * 41, "abc", "", "1e5", "00001"]))
            return req
        req = {"ShardIterator": self.iterator()}
        if r.random() < 0.3:
            req["Limit"] = r.choice([1, 2, 1000, 0, 1001, -1])
        return req

    # ---- PartiQL statements (ExecuteStatement & co.)
    def pq_value(self, params, typ=None):
        """A PartiQL literal (text) of a type, or `?` with the AttributeValue appended to params."""
        r = self.r
        if r.random() < 0.3:
            params.append(self.key_value(typ) if typ else self.av())
            return "?"
        typ = typ or r.choice("SNSNBL")
        if typ == "S":
            return "'%s'" % r.choice(["k%d" % r.randrange(8), "", "it''s", "é😀", "x" * r.choice([1, 300])])
        if typ == "N":
            return r.choice([str(r.randrange(8)), "-1.5", "1e125", "1e126", "0.0", "12345678901234567890123456789012345678"])
        if typ == "B":
            params.append(self.key_value("B"))
            return "?"
        return r.choice(["TRUE", "NULL", "[1, 'a', {'m': [2]}]", "{'a': 1, 'b': <<'x', 'y'>>}", "<<1, 2>>", "MISSING"])

    def pq_path(self):
        r = self.r
        return r.choice(["a", "b", "c", "n", "lst[0]", "lst[2]", "mp.x", "mp.x[1].y", "mp.x[0]", "mp.x[1].y.z",
                         '"a"', '"status"', "s", "lsk", "gh"])

    def pq_cond(self, params, depth=0):
        r = self.r
        k = r.randrange(10 if depth < 3 else 6)
        p = self.pq_path()
        if k == 0:
            return "%s %s %s" % (p, r.choice(["=", "<>", "<", "<=", ">", ">=", "!="]), self.pq_value(params))
        if k == 1:
            return "%s BETWEEN %s AND %s" % (p, self.pq_value(params, "N"), self.pq_value(params, "N"))
        if k == 2:
            return "%s %sIN [%s]" % (p, r.choice(["", "NOT "]), ", ".join(self.pq_value(params) for _ in range(r.randrange(1, 4))))
        if k == 3:
            return "%s IS %s%s" % (p, r.choice(["", "NOT "]), r.choice(["MISSING", "NULL", "STRING", "NUMERIC", "TUPLE", "LIST", "BOOLEAN", "BLOB"]))
        if k == 4:
            return "%s(%s, %s)" % (r.choice(["begins_with", "contains", "attribute_type"]), p, self.pq_value(params, "S"))
        if k == 5:
            return r.choice(["exists(%s)", "missing(%s)", "size(%s) > 2"]) % p
        if k in (6, 7):
            return "(%s) %s (%s)" % (self.pq_cond(params, depth + 1), r.choice(["AND", "OR"]), self.pq_cond(params, depth + 1))
        return "NOT (%s)" % self.pq_cond(params, depth + 1)

    def pq_key_conds(self, t, params, full=True):
        spec = self.specs.get(t)
        keys = spec[1] if spec else [("pk", "S")]
        conds = []
        for i, (name, typ) in enumerate(keys):
            if i and not full and self.r.random() < 0.5:
                continue
            conds.append('"%s" = %s' % (name, self.pq_value(params, typ)))
        if not full and self.r.random() < 0.3:
            conds[0] = '"%s" IN [%s, %s]' % (keys[0][0], self.pq_value(params, keys[0][1]), self.pq_value(params, keys[0][1]))
        return conds

    def pq_statement(self):
        """(statement text, parameters) for one of the fuzz tables."""
        r = self.r
        pool = self.pq_pool
        if pool and r.random() < 0.3:
            # a text used before, with other parameters: its plan is kept (src/api/partiql.c)
            text, n = r.choice(pool)
            n = max(0, n + r.choice([0, 0, 0, 0, -1, 1]))
            return text, [self.key_value(r.choice("SNB")) if r.random() < 0.6 else self.av() for _ in range(n)]
        text, params = self.pq_statement_new()
        pool.append((text, len(params)))
        del pool[:-20]
        return text, params

    def pq_statement_new(self):
        """A new (statement text, parameters) for one of the fuzz tables."""
        r = self.r
        t = self.table()
        t = t if isinstance(t, str) else "t"
        params = []
        kind = r.randrange(6)
        if kind <= 1:
            spec = self.specs.get(t)
            src = '"%s"' % t
            if spec and spec[2] and r.random() < 0.3:
                src += '."%s"' % r.choice(sorted(spec[2]))
            proj = "*" if r.random() < 0.5 else ", ".join(self.pq_path() for _ in range(r.randrange(1, 4)))
            where = []
            if r.random() < 0.7:
                where += self.pq_key_conds(t, params, full=r.random() < 0.4)
            if r.random() < 0.5:
                where.append(self.pq_cond(params))
            text = "SELECT %s FROM %s" % (proj, src)
            if where:
                text += " WHERE " + " AND ".join(where)
            if r.random() < 0.2:
                text += " ORDER BY %s %s" % (r.choice(["pk", "sk", "a"]), r.choice(["ASC", "DESC", ""]))
        elif kind == 2:
            item = dict((n, self.pq_value(params, ty)) for n, ty in (self.specs.get(t) or (None, [("pk", "S")]))[1])
            for _ in range(r.randrange(4)):
                item[r.choice(ATTRS)] = self.pq_value(params)
            text = 'INSERT INTO "%s" VALUE {%s}' % (t, ", ".join("'%s': %s" % kv for kv in item.items()))
        elif kind == 3:
            sets = []
            for _ in range(r.randrange(1, 4)):
                p = self.pq_path()
                sets.append(r.choice(["SET %s = %s" % (p, self.pq_value(params)), "SET %s = %s + 1" % (p, p),
                                      "REMOVE %s" % p, "SET %s = list_append(%s, [1])" % (p, p),
                                      "SET %s = set_add(%s, <<'z'>>)" % (p, p), "SET %s = set_delete(%s, <<1>>)" % (p, p)]))
            where = self.pq_key_conds(t, params, full=r.random() < 0.9)
            if r.random() < 0.3:
                where.append(self.pq_cond(params))
            text = 'UPDATE "%s" %s WHERE %s' % (t, " ".join(sets), " AND ".join(where))
            if r.random() < 0.3:
                text += " RETURNING %s %s *" % (r.choice(["ALL", "MODIFIED"]), r.choice(["OLD", "NEW"]))
        elif kind == 4:
            where = self.pq_key_conds(t, params, full=r.random() < 0.9)
            if r.random() < 0.3:
                where.append(self.pq_cond(params))
            text = 'DELETE FROM "%s" WHERE %s' % (t, " AND ".join(where))
            if r.random() < 0.2:
                text += " RETURNING ALL OLD *"
        else:
            where = self.pq_key_conds(t, params) + [self.pq_cond(params)]
            text = 'EXISTS(SELECT * FROM "%s" WHERE %s)' % (t, " AND ".join(where))
        if r.random() < 0.5:
            text = self.pq_mutate(text)
        if r.random() < 0.05 and params:
            params.pop() if r.random() < 0.5 else params.append(self.av())
        return text, params

    def pq_mutate(self, text):
        """Token-level mutations of a statement."""
        r = self.r
        toks = re.findall(r"'(?:[^']|'')*'|\"[^\"]*\"|<<|>>|<=|>=|<>|!=|\w+|\S", text)
        for _ in range(r.choice([1, 1, 2, 3])):
            c = r.randrange(7)
            i = r.randrange(len(toks) + 1)
            if c == 0 and toks:
                del toks[min(i, len(toks) - 1)]
            elif c == 1:
                toks.insert(i, r.choice(PQ_TOKENS))
            elif c == 2 and toks:
                toks[min(i, len(toks) - 1)] = r.choice(PQ_TOKENS)
            elif c == 3 and len(toks) > 1:
                j = r.randrange(len(toks) - 1)
                toks[j], toks[j + 1] = toks[j + 1], toks[j]
            elif c == 4:
                toks = toks[:i]
            elif c == 5 and toks:
                toks.insert(i, toks[min(i, len(toks) - 1)])
            else:
                toks.insert(i, chr(r.randrange(1, 0x3000)))
        return " ".join(toks)

    def pq_entry(self, batch=False):
        text, params = self.pq_statement()
        e = {"Statement": text}
        if params:
            e["Parameters"] = params
        if batch and self.r.random() < 0.2:
            e["ConsistentRead"] = self.r.random() < 0.5
        if self.r.random() < 0.1:
            e["ReturnValuesOnConditionCheckFailure"] = self.r.choice(["ALL_OLD", "NONE"])
        return e

    # ---- mutation
    def nodes(self, v, path=()):
        yield path, v
        if isinstance(v, dict):
            for k, x in v.items():
                yield from self.nodes(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from self.nodes(x, path + (i,))

    def mutate(self, req):
        r = self.r
        allnodes = list(self.nodes(req))
        path, node = r.choice(allnodes)
        parent = None
        if path:
            parent = req
            for p in path[:-1]:
                parent = parent[p]
        last = path[-1] if path else None

        def setv(v):
            if parent is None:
                return v
            parent[last] = v
            return req

        c = r.randrange(18)
        if c >= 16:                                # null entries in lists and maps
            conts = [n for _, n in allnodes if isinstance(n, (list, dict))]
            if not conts:
                return None
            cont = r.choice(conts)
            if isinstance(cont, list):
                if cont and r.random() < 0.5:
                    cont[r.randrange(len(cont))] = None
                else:
                    cont.insert(r.randrange(len(cont) + 1), None)
            elif cont:
                cont[r.choice(list(cont))] = None
            return req
        if not isinstance(req, dict) and c in (9, 10, 11, 13, 14):
            c = 2
        if c == 0 and parent is not None:          # drop member / element
            del parent[last]
            return req
        if c == 1 and isinstance(node, dict):      # unknown member
            node[r.choice(["Foo", "", "TableName", "Key", "S", "N", "L", "IndexName", "x" * 300, "Limit"])] = self.other_json()
            return req
        if c in (2, 3):                            # another JSON type
            return setv(self.other_json())
        if c == 4:                                 # empty container
            return setv(r.choice([{}, []]))
        if c == 5:                                 # bad AttributeValue
            return setv(self.bad_av())
        if c == 6 and isinstance(node, str):       # string mutation
            s = node
            m = r.randrange(6)
            if m == 0 and s:
                i = r.randrange(len(s))
                s = s[:i] + s[i + 1:]
            elif m == 1:
                i = r.randrange(len(s) + 1)
                s = s[:i] + r.choice([" ", "(", ")", ",", ".", "[", "]", ":", "#", "AND", " OR ", " NOT ", "=", "<",
                                      "BETWEEN", "IN", "SET", "REMOVE", "size", ":v", "#n", "0", "\"", "'", "é",
                                      "[0]", "[", "attribute_exists(", ":zz", "#zz"]) + s[i:]
            elif m == 2:
                s = s * r.choice([2, 10, 300])
            elif m == 3:
                s = s[:r.randrange(len(s) + 1)]
            elif m == 4:
                s = self.token_soup()
            else:
                s = s.upper() if s != s.upper() else s.lower()
            return setv(s)
        if c == 7 and isinstance(node, list) and node:   # duplicate / multiply entries
            k = r.choice([1, 2, 24, 25, 26, 100, 101])
            node.extend(copy.deepcopy(r.choice(node)) for _ in range(k))
            return req
        if c == 8 and isinstance(node, (int, float)) and not isinstance(node, bool):
            return setv(r.choice([0, -1, 1, 2 ** 31, 2 ** 31 - 1, 2 ** 63, -(2 ** 63), 1.5, "1", Raw("1e400"),
                                  1000000, 999999, 1000001, 101, 100]))
        if c == 9:                                 # numeric members anywhere
            key = r.choice(["Limit", "Segment", "TotalSegments"])
            req[key] = r.choice([0, -1, 1, 2, 2 ** 31, 2 ** 31 - 1, 2 ** 63, 1.5, "1", Raw("1e400"), None,
                                 1000000, 999999, 1000001, Raw("-0"), Raw("1.0"), Raw("1E0")])
            return req
        if c == 10:                                # ExclusiveStartKey garbage
            req["ExclusiveStartKey"] = r.choice([{}, [], None, "x", self.key_for(self.table(), valid=False),
                                                 {"pk": self.bad_av()}, self.item_for(self.table()),
                                                 {"pk": {"S": "k1"}, "sk": {"N": "1"}, "gh": {"S": "x"}}])
            return req
        if c == 11:                                # enum members
            key = r.choice(["ReturnValues", "ReturnConsumedCapacity", "Select", "ReturnItemCollectionMetrics",
                            "ConditionalOperator", "ReturnValuesOnConditionCheckFailure", "BillingMode"])
            req[key] = r.choice(["", "x", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW", "NONE", "TOTAL",
                                 "INDEXES", "COUNT", "SPECIFIC_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES",
                                 "ALL_ATTRIBUTES", "AND", "OR", "SIZE", "all_old", 1, None, [], {}])
            return req
        if c == 12 and isinstance(node, dict) and node:  # rename a member
            k = r.choice(list(node))
            node[r.choice(["#n", ":v", "", "a.b", k.lower(), k + "x", "x" * 256])] = node.pop(k)
            return req
        if c == 13:                                # expression members
            key = r.choice(["ConditionExpression", "FilterExpression", "KeyConditionExpression", "UpdateExpression",
                            "ProjectionExpression"])
            names, vals = {}, {}
            req[key] = r.choice([self.token_soup(), "", " ", self.condition(names, vals), self.update(names, vals),
                                 "a = :v " * r.choice([1, 1000, 10000]), "(" * 500 + "a" + ")" * 500,
                                 "NOT " * 300 + "a = :v", "a" + ".b" * 600, "a" + "[0]" * 100])
            if r.random() < 0.5 and names:
                req.setdefault("ExpressionAttributeNames", names)
            if r.random() < 0.5 and vals:
                req.setdefault("ExpressionAttributeValues", vals)
            return req
        if c == 14:                                # names / values maps
            key = r.choice(["ExpressionAttributeNames", "ExpressionAttributeValues"])
            req[key] = r.choice([{}, [], None, {"#n": 1}, {"#n": ""}, {"n": "a"}, {":v": self.bad_av()},
                                 {"v": {"S": "x"}}, {"#": "a"}, {":": {"S": "a"}}, {"#n": "a", ":v": {"S": "x"}},
                                 {"#n" + str(i): "a" for i in range(300)}])
            return req
        if c == 15 and isinstance(node, dict) and len(node) == 1:   # AttributeValue-ish: wrap in L/M
            k = list(node)[0]
            if k in ("S", "N", "B", "SS", "NS", "BS", "L", "M", "BOOL", "NULL"):
                return setv(r.choice([{"L": [node]}, {"M": {"x": node}}, {k: node[k], "NULL": True}]))
        return setv(self.other_json()) if r.random() < 0.5 else req

    def token_soup(self):
        r = self.r
        toks = ["a", "b.c", "d[0]", "#n", "#m", ":v", ":w", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT",
                "BETWEEN", "IN", "(", ")", ",", "SET", "REMOVE", "ADD", "DELETE", "size", "attribute_exists",
                "attribute_not_exists", "attribute_type", "begins_with", "contains", "list_append",
                "if_not_exists", "+", "-", "[", "]", ".", "status", "[99999999999999999999]", "#", ":", "\"",
                "é", "\t", "1", "a.b.c.d"]
        return " ".join(r.choice(toks) for _ in range(r.randrange(1, 20)))

    HELPERS = {
        "eval_condition": "SELECT dynindex.eval_condition(%s, %s::jsonb, %s::jsonb, %s::jsonb)::text",
        "apply_update": "SELECT dynindex.apply_update(%s, %s::jsonb, %s::jsonb, %s::jsonb)::text",
        "project": "SELECT dynindex.project(%s, %s::jsonb, %s::jsonb)::text",
        "to_plain": "SELECT dynindex.to_plain(%s::jsonb)::text",
        "from_plain": "SELECT dynindex.from_plain(%s::jsonb, %s)::text",
        "encode_key": "SELECT dynindex.encode_key(%s::jsonb, %s)::text",
        "key_segment": "SELECT dynindex.key_segment(decode(%s, 'hex'), %s)::text",
        "parse_s3_xml": "SELECT dynindex._parse_s3_xml(%s, %s)::text",
    }
    # responses of S3-compatible stores, for the XML reader of src/exchange/s3.c
    S3_XML = [
        '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>'
        '<IsTruncated>true</IsTruncated><NextContinuationToken>1ue%2F&amp;x==</NextContinuationToken>'
        '<Contents><Key>p/a &amp; b&#233;&#x1F600;</Key><Size>12</Size><ETag>&quot;abc&quot;</ETag></Contents>'
        '<Contents><Key>p/c</Key><Size>0</Size></Contents></ListBucketResult>',
        '<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>',
        '<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>VXBsb2FkIElE</UploadId></InitiateMultipartUploadResult>',
        '<CompleteMultipartUploadResult><ETag>"3858f62230ac3c915f300c664312c11f-9"</ETag></CompleteMultipartUploadResult>',
    ]

    def helper(self):
        """(name, args) of a call of one of the SQL helper functions (not dynindex.api)."""
        r = self.r
        name = r.choice(sorted(self.HELPERS))
        maybe = lambda v: None if r.random() < 0.1 or v == {} else dumps(v)
        item = lambda: r.choice([{a: self.av() for a in r.sample(ATTRS, r.randrange(0, 5))},
                                 self.item_for(self.table()), self.other_json(), {"a": self.bad_av()}])
        names, vals = {}, {}
        if name in ("eval_condition", "apply_update"):
            ex = self.condition(names, vals) if name == "eval_condition" else self.update(names, vals)
            if r.random() < 0.3:
                ex = r.choice([self.token_soup(), "", ex * 3, ex[:r.randrange(len(ex) + 1)]])
            it = item()
            if r.random() < 0.5 and isinstance(it, dict):
                it = self.mutate(it)
            args = [ex, maybe(it), maybe(names if r.random() < 0.9 else self.other_json()),
                    maybe(vals if r.random() < 0.9 else self.other_json())]
        elif name == "project":
            args = [self.projection(names) if r.random() < 0.8 else self.token_soup(), maybe(item()),
                    maybe(names if r.random() < 0.9 else self.other_json())]
        elif name == "to_plain":
            it = item()
            args = [dumps(self.mutate(it) if r.random() < 0.5 else it)]
        elif name == "from_plain":
            args = [dumps(r.choice([self.other_json(), {"a": [1, "x", None, {"b": 1.5}]}, {"s": ["a", "a"]},
                                    {"n": Raw(r.choice(RAW_EXTREMES))}, self.deep(r.choice([10, 40, 100]))])),
                    r.random() < 0.5]
        elif name == "encode_key":
            args = [dumps(r.choice([self.av(), self.bad_av(), self.key_value(r.choice("SNB")), self.other_json()])),
                    r.random() < 0.5]
        elif name == "parse_s3_xml":
            x = r.choice(self.S3_XML)
            for _ in range(r.choice([0, 1, 3, 10])):
                i = r.randrange(len(x) + 1)
                x = x[:i] + r.choice(["&", "&#", "&#x", ";", "<", ">", "</Key>", "<Key>", "&#0;", "&#xD800;",
                                      "&#99999999;", "&amp", "\u00e9", "x" * 100, "", "&lt;"]) + x[i + r.randrange(3):]
            if r.random() < 0.2:
                x = x[:r.randrange(len(x) + 1)]
            args = [x, r.choice(["Key", "Size", "Code", "Message", "UploadId", "ETag", "Contents", "IsTruncated",
                                 "NextContinuationToken", "", "<", "K"])]
        else:
            args = [bytes(r.randrange(256) for _ in range(r.choice([0, 1, 4, 16, 300]))).hex(),
                    r.choice([1, 2, 4, 1000000, 0, -1, 2 ** 31 - 1, -2 ** 31])]
        return name, args

    def request(self):
        """(op, request) for one fuzz iteration; op "fn:<name>" calls a SQL helper with the args list."""
        r = self.r
        if r.random() < self.helper_rate:
            name, args = self.helper()
            return "fn:" + name, args
        op = r.choice(OPS) if r.random() < 0.25 else r.choice(
            ["PutItem", "GetItem", "DeleteItem", "UpdateItem", "BatchGetItem", "BatchWriteItem", "Query", "Query",
             "Scan", "TransactWriteItems", "TransactGetItems", "ExecuteStatement", "ExecuteStatement",
             "BatchExecuteStatement", "ExecuteTransaction", "GetShardIterator", "GetRecords", "DescribeStream"])
        req = self.seed(op)
        send_op = op
        if r.random() < 0.03:
            send_op = r.choice(OPS + ["Bogus", "", "query"])
        n = r.choice([0, 1, 1, 1, 2, 2, 3, 5]) if r.random() < self.mutate_rate else 0
        if op in ("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction") and r.random() < 0.6:
            n = 0               # their statements are mutated token by token (pq_mutate)
        for _ in range(n):
            req = self.mutate(req)
        return send_op, req


# --------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.args = args
        self.conn = None
        self.stats = collections.defaultdict(collections.Counter)
        self.bugs = collections.Counter()
        self.messages = collections.defaultdict(collections.Counter)
        self.out = open(args.out, "a") if args.out else None
        self.logpos = None
        self.feed = None
        self.feed_stream = None
        self.log_problems = collections.Counter()
        self.in_txn = False
        self.txn_ctx = []
        self.mem_base = self.mem_pid = self.mem_max = None

    def connect(self, wait=60):
        deadline = time.time() + wait
        while True:
            try:
                self.conn = psycopg2.connect(self.args.dsn)
                self.conn.autocommit = True
                with self.conn.cursor() as c:
                    c.execute("SET statement_timeout = %s", (str(self.args.timeout * 1000),))
                    # the refused requests stay out of the server log, so that what remains there
                    # (errors of the GSI worker, of other processes) can be reported
                    try:
                        c.execute("SET log_min_messages = log")
                    except psycopg2.Error:
                        pass
                return
            except psycopg2.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)

    def execute(self, op, text, fn="api"):
        """-> (class, sqlstate, message)"""
        if self.in_txn:
            kind, code, msg = self.execute1(op, text, fn, "SAVEPOINT fz; ")
            # sessions holding the locks of several requests (an explicit transaction) can
            # deadlock with each other, e.g. two DeleteTables each of a table the other used:
            # PostgreSQL's answer, as for any SQL; a single request cannot (one per statement)
            if kind == "BUG" and code in ("40P01", "40001"):
                kind = "YD"
            if kind != "CRASH":
                try:
                    with self.conn.cursor() as c:
                        c.execute("ROLLBACK TO SAVEPOINT fz" if kind != "OK" else "RELEASE SAVEPOINT fz")
                except psycopg2.Error as e:
                    if self.conn.closed or e.pgcode is None:
                        return "CRASH", "", str(e).strip()[:300]
                    return "BUG", e.pgcode, "after the request: " + (e.pgerror or "").strip()[:300]
            return kind, code, msg
        return self.execute1(op, text, fn, "")

    def execute1(self, op, text, fn, pre):
        try:
            with self.conn.cursor() as c:
                if pre:
                    c.execute(pre)
                if op.startswith("fn:"):
                    c.execute(Gen.HELPERS[op[3:]], json.loads(text))
                    c.fetchone()
                    return "OK", "", ""
                if fn == "read_all":
                    c.execute("SELECT count(*) FROM dynindex.read_all(%s, %s::jsonb)", (op, text))
                else:
                    c.execute("SELECT dynindex.api(%s, %s::jsonb)::text", (op, text))
                res = c.fetchone()[0]
            if fn == "api":
                try:
                    resp = json.loads(res)
                    if self.feed:
                        self.feed(resp)
                    if self.feed_stream:
                        self.feed_stream(resp)
                    if not isinstance(resp, dict):
                        return "BUG", "", "response is not a JSON object: " + res[:200]
                except ValueError:
                    return "BUG", "", "response is not JSON: " + res[:200]
            return "OK", "", ""
        except psycopg2.Error as e:
            if self.conn.closed or e.pgcode is None:
                return "CRASH", "", str(e).strip()[:300]
            code = e.pgcode
            msg = (e.pgerror or "").strip()
            msg = re.sub(r"^ERROR:\s+", "", msg).split("\n")[0]
            if code == "57014":
                return "BUG", code, "statement timeout: " + msg
            if code.startswith("YD") and code != "YD500":
                typ = ERROR_TYPES.get(code)
                if typ is None or not msg.startswith(typ + ": "):
                    return "BUG", code, "malformed YD error: " + msg[:300]
                if "(null)" in msg:
                    # a C NULL string formatted into the message (issue 23: "...v20120810.(null)>")
                    return "BUG", code, "NULL string in message: " + msg[:300]
                if code != "YD012" and SUSPECT.search(PQ_EXPECTED.sub("", msg)) and not self.args.lenient:
                    return "BUG", code, "suspicious message: " + msg[:300]
                return "YD", code, msg
            if op.startswith("fn:") and (op[3:], code) in DOCUMENTED_SQL_ERRORS:
                return "YD", code, msg
            return "BUG", code, msg[:300]

    def ensure(self, q, args=()):
        with self.conn.cursor() as c:
            c.execute(q, args)
            return c.fetchall() if c.description else None

    def setup_tables(self, gen, names=None):
        for name, (create, _, _) in gen.specs.items():
            if names is not None and name not in names:
                continue
            try:
                self.ensure("SELECT dynindex.api('DeleteTable', %s::jsonb)", (json.dumps({"TableName": name}),))
            except psycopg2.Error as e:
                if e.pgcode != "YD002":
                    raise
            try:
                self.ensure("SELECT dynindex.api('CreateTable', %s::jsonb)", (json.dumps(create),))
            except psycopg2.Error as e:
                if e.pgcode != "YD003":     # another session sharing --prefix made it
                    raise
            if names is None or self.args.populate:
                for i in range(8):
                    item = gen.key_for(name)
                    for idx in gen.specs[name][2].values():
                        for a in idx:
                            item[a[0]] = gen.key_value(a[1])
                    item["a"] = {"S": "v%d" % i}
                    item["lst"] = {"L": [{"N": "1"}, {"S": "x"}]}
                    item["mp"] = {"M": {"x": {"N": "1"}}}
                    try:
                        self.ensure("SELECT dynindex.api('PutItem', %s::jsonb)",
                                    (json.dumps({"TableName": name, "Item": item}),))
                    except psycopg2.Error:
                        pass

    def prime_streams(self, gen):
        """Stream ARNs, shard ids, iterators and sequence numbers for the Streams API requests."""
        for name, (create, _, _) in gen.specs.items():
            if "StreamSpecification" in create:
                self.execute("DescribeTable", json.dumps({"TableName": name}))
        for arn in list(gen.streams):
            self.execute("DescribeStream", json.dumps({"StreamArn": arn}))
            for shard in gen.shards[:4]:
                self.execute("GetShardIterator", json.dumps({"StreamArn": arn, "ShardId": shard,
                                                             "ShardIteratorType": "TRIM_HORIZON"}))
        for it in list(gen.iterators[:4]):
            self.execute("GetRecords", json.dumps({"ShardIterator": it}))

    def server_log_tail(self):
        if not self.args.server_log:
            return ""
        try:
            with open(self.args.server_log, errors="replace") as f:
                if self.logpos is None:     # the first call: only what comes after
                    f.seek(0, os.SEEK_END)
                    self.logpos = f.tell()
                    return ""
                f.seek(self.logpos)
                data = f.read()
                self.logpos = f.tell()
            lines = [l for l in data.splitlines() if re.search(r"terminated by signal|TRAP|PANIC|Assert", l)]
            for l in data.splitlines():
                m = re.search(r"\b(ERROR|FATAL|PANIC):\s+(.*)", l)
                if m and not LOG_EXPECTED.search(m.group(2)):
                    self.log_problems[re.sub(r"\d+", "N", m.group(0))[:200]] += 1
            return "\n".join(lines[-5:])
        except OSError:
            return ""

    def record(self, kind, op, text, code, msg, it, extra=""):
        key = (kind, code, re.sub(r"\d+", "N", msg)[:160], op)
        self.bugs[key] += 1
        if self.bugs[key] <= self.args.max_per_bug and self.out:
            self.out.write(json.dumps({"class": kind, "op": op, "request": text, "sqlstate": code,
                                       "message": msg, "seed": self.args.seed, "iteration": it,
                                       "log": extra,
                                       "transaction": [{"op": o, "request": t} for o, t in self.txn_ctx]}) + "\n")
            self.out.flush()
        if self.bugs[key] == 1:
            print("%s #%d %s %s %s\n    %s" % (kind, it, op, code, msg[:300], text[:500]), flush=True)
            if extra:
                print("    server log: " + extra.replace("\n", "\n    "), flush=True)

    def run_one(self, op, text, it, fn="api"):
        kind, code, msg = self.execute(op, text, fn)
        if kind == "CRASH":
            self.in_txn = False
            time.sleep(1)
            self.connect()
            log = self.server_log_tail()
            kind2, code2, msg2 = self.execute(op, text, fn)   # confirm on a fresh backend
            if kind2 == "CRASH":
                time.sleep(1)
                self.connect()
                log += "\n" + self.server_log_tail()
                self.record("CRASH", op, text, "", msg, it, log.strip())
                self.stats[op]["CRASH"] += 1
                return "CRASH"
            print("(connection lost at #%d but the replay gave %s: %s)" % (it, kind2, log), flush=True)
            self.stats[op]["LOST"] += 1
            return kind2
        if kind == "BUG":
            self.record("BUG", op, text, code, msg, it)
        self.stats[op][kind] += 1
        if kind == "YD":
            self.stats[op][code] += 1
            if self.args.top:
                self.messages[op][re.sub(r"\d+", "N", msg)[:140]] += 1
        return kind

    def fuzz(self):
        args = self.args
        rng = random.Random(args.seed)
        gen = Gen(rng, args.prefix, args.mutate_rate)
        if args.feedback:
            self.feed = gen.feed
        self.feed_stream = gen.feed_stream
        self.connect()
        self.server_log_tail()
        self.setup_tables(gen)
        self.prime_streams(gen)
        start = time.time()
        it = 0
        group = 0           # requests left in the current transaction (--txn-rate)
        rebuild = set()
        while True:
            if args.count and it >= args.count:
                break
            if args.duration and time.time() - start >= args.duration:
                break
            it += 1
            if group == 0 and rng.random() < args.txn_rate:
                group = rng.randrange(2, 8)
                self.txn_ctx = []
                self.ensure("BEGIN")
                self.in_txn = True
            op, req = gen.request()
            text = dumps(req)
            fn = "read_all" if op in ("Query", "Scan") and rng.random() < 0.05 else "api"
            kind = self.run_one(op, text, it, fn)
            if self.in_txn:
                self.txn_ctx.append((op, text))
                group -= 1
                if group == 0:
                    end = "COMMIT" if rng.random() < 0.6 else "ROLLBACK"
                    try:
                        self.ensure(end)
                    except psycopg2.Error as e:
                        if self.conn.closed or e.pgcode is None:
                            self.record("CRASH", end, "", "", str(e).strip()[:300], it, self.server_log_tail())
                            time.sleep(1)
                            self.connect()
                        else:
                            self.record("BUG", end, "", e.pgcode, (e.pgerror or "").strip()[:300], it)
                            self.ensure("ROLLBACK")
                    self.in_txn = False
                    self.txn_ctx = []
            elif group:
                group = 0   # the connection was lost in the transaction
            # the scratch tables must keep their schema: rebuild one a request changed or dropped
            if kind == "OK" and op in ("DeleteTable", "UpdateTable", "CreateTable") and isinstance(req, dict):
                t = req.get("TableName")
                if isinstance(t, str) and t in gen.specs:
                    rebuild.add(t)
            if rebuild and not self.in_txn:
                self.setup_tables(gen, rebuild)
                rebuild = set()
            if it % 500 == 0 and not self.in_txn:
                have = {r[0] for r in self.ensure("SELECT table_name FROM dynindex.tables")}
                missing = set(gen.specs) - have
                if missing:
                    self.setup_tables(gen, missing)
            if it % 5000 == 0 and not self.in_txn:
                self.memory_check(it)
            if args.progress and it % args.progress == 0:
                print("... %d requests, %.0f/s, %d distinct problems" % (it, it / (time.time() - start), len(self.bugs)),
                      flush=True)
        self.summary(it, time.time() - start)

    SWEEP_VALUES = [None, {}, [], "", "x", 0, -1, True, Raw("1e400"), [None], {"S": "x"}, {"S": 1}, {"N": "x"},
                    {"L": {}}, {"M": []}, {"SS": []}]

    def sweep(self):
        """Every single-point mutation of valid seeds: each member removed, each value replaced by
        each of SWEEP_VALUES, a null added to each list, an unknown member added to each object."""
        args = self.args
        gen = Gen(random.Random(args.seed), args.prefix, 0.0)
        self.connect()
        self.server_log_tail()
        self.setup_tables(gen)
        self.prime_streams(gen)
        start = time.time()
        it = 0
        for op in OPS:
            for _ in range(args.sweep):
                seed = gen.seed(op)
                paths = [p for p, _ in gen.nodes(seed)]
                for path in paths:
                    variants = []
                    if path:
                        variants.append(("drop", None))
                        variants.extend(("set", v) for v in self.SWEEP_VALUES)
                    node = seed
                    for p in path:
                        node = node[p]
                    if isinstance(node, list):
                        variants.append(("append-null", None))
                    if isinstance(node, dict):
                        variants.append(("add-member", None))
                    for how, v in variants:
                        req = copy.deepcopy(seed)
                        parent = req
                        for p in path[:-1]:
                            parent = parent[p]
                        target = parent[path[-1]] if path else req
                        if how == "drop":
                            del parent[path[-1]]
                        elif how == "set":
                            parent[path[-1]] = copy.deepcopy(v)
                        elif how == "append-null":
                            target.append(None)
                        else:
                            target["Unknown"] = "x"
                        it += 1
                        kind = self.run_one(op, dumps(req), it)
                        if kind == "OK" and op in ("DeleteTable", "UpdateTable", "CreateTable") and \
                                isinstance(req, dict) and req.get("TableName") in gen.specs:
                            self.setup_tables(gen, {req["TableName"]})
            if args.progress:
                print("... %s done, %d requests" % (op, it), flush=True)
        self.summary(it, time.time() - start)

    def memory_check(self, it):
        """The backend's memory (all contexts): steady growth over a run is a leak into a long-lived context."""
        try:
            mem = self.ensure("SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts")[0][0]
        except psycopg2.Error:
            return
        if self.mem_base is None or self.mem_pid != self.conn.get_backend_pid():
            self.mem_base, self.mem_pid, self.mem_max = mem, self.conn.get_backend_pid(), mem
            return
        self.mem_max = max(self.mem_max, mem)
        if mem - self.mem_base > self.args.leak_mb * 1024 * 1024:
            self.record("LEAK", "-", "", "", "backend memory grew from %d to %d bytes" % (self.mem_base, mem), it)
            self.stats["-"]["BUG"] += 1
            self.mem_base = mem

    def replay(self):
        self.connect()
        self.server_log_tail()
        n = 0
        with open(self.args.replay) as f:
            for line in f:
                if not line.strip():
                    continue
                d = json.loads(line)
                n += 1
                kind, code, msg = self.execute(d["op"], d["request"])
                if kind == "CRASH":
                    time.sleep(1)
                    self.connect()
                print("%-5s %-10s %-5s %s" % (kind, d["op"], code, msg[:200]))
                self.stats[d["op"]][kind] += 1
        self.summary(n, 0)

    def summary(self, n, secs):
        print("=" * 78)
        print("%d requests%s (seed %s)" % (n, " in %.0fs (%.0f/s)" % (secs, n / secs) if secs else "", self.args.seed))
        print("%-20s %8s %8s %8s %6s %6s %6s" % ("op", "total", "OK", "YD", "BUG", "CRASH", "LOST"))
        tot = collections.Counter()
        for op in sorted(self.stats):
            s = self.stats[op]
            t = s["OK"] + s["YD"] + s["BUG"] + s["CRASH"] + s["LOST"]
            print("%-20s %8d %8d %8d %6d %6d %6d" % (op, t, s["OK"], s["YD"], s["BUG"], s["CRASH"], s["LOST"]))
            for k in ("OK", "YD", "BUG", "CRASH", "LOST"):
                tot[k] += s[k]
        print("%-20s %8d %8d %8d %6d %6d %6d" % ("total", sum(tot.values()), tot["OK"], tot["YD"], tot["BUG"],
                                               tot["CRASH"], tot["LOST"]))
        for op in sorted(self.messages):
            print("most frequent errors of %s:" % op)
            for m, c in self.messages[op].most_common(self.args.top):
                print("  %6d %s" % (c, m))
        if self.bugs:
            print("distinct problems: %d%s" % (len(self.bugs), " (requests in %s)" % self.args.out if self.args.out else ""))
            for (kind, code, msg, op), c in sorted(self.bugs.items(), key=lambda x: -x[1]):
                print("  %5dx %-5s %-18s %-5s %s" % (c, kind, op, code, msg[:150]))
        self.server_log_tail()
        if self.log_problems:
            print("server log: errors of other processes (the GSI worker, ...):")
            for m, c in self.log_problems.most_common(20):
                print("  %6d %s" % (c, m))
            tot["BUG"] += sum(self.log_problems.values())
        if self.mem_base is not None:
            print("backend memory: %d bytes at the first check, at most %d" % (self.mem_base, self.mem_max))
        print("RESULT: %s" % ("FAIL" if tot["BUG"] or tot["CRASH"] else "PASS"))
        return tot["BUG"] + tot["CRASH"]


def main():
    sys.setrecursionlimit(20000)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=os.environ.get("FUZZ_DSN", "dbname=postgres"), help="libpq connection string")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=0, help="number of requests (0: no limit)")
    ap.add_argument("--duration", type=float, default=0, help="seconds to run (0: no limit)")
    ap.add_argument("--prefix", default="fz_", help="prefix of the scratch tables' names")
    ap.add_argument("--out", default="fuzz-failures.jsonl", help="failing requests are appended here ('' : nowhere)")
    ap.add_argument("--max-per-bug", type=int, default=3, help="requests saved per distinct problem")
    ap.add_argument("--timeout", type=int, default=20, help="statement_timeout, seconds")
    ap.add_argument("--server-log", help="the server's log file: crashes print its signal lines")
    ap.add_argument("--replay", help="replay the requests of a failures file")
    ap.add_argument("--progress", type=int, default=0, help="print a line every N requests")
    ap.add_argument("--populate", action="store_true", help="refill rebuilt tables")
    ap.add_argument("--mutate-rate", type=float, default=0.9, help="share of requests that are mutated")
    ap.add_argument("--top", type=int, default=0, help="print the N most frequent DynamoDB errors per operation")
    ap.add_argument("--feedback", action="store_true",
                    help="reuse keys and items of responses in later requests (more coverage; the request "
                         "sequence then depends on the responses, so a seed no longer fixes it)")
    ap.add_argument("--leak-mb", type=int, default=64, help="backend memory growth reported as a leak")
    ap.add_argument("--txn-rate", type=float, default=0.05,
                    help="share of requests that start an explicit transaction of 2-7 requests, each in a "
                         "savepoint (rolled back on error), ending in COMMIT or ROLLBACK")
    ap.add_argument("--sweep", type=int, default=0,
                    help="instead of random mutations: every single-point mutation of N seeds per operation")
    ap.add_argument("--lenient", action="store_true", help="do not flag YD messages that look internal")
    args = ap.parse_args()
    if not args.count and not args.duration and not args.replay and not args.sweep:
        args.count = 10000
    runner = Runner(args)
    if args.replay:
        runner.replay()
    elif args.sweep:
        runner.sweep()
    else:
        runner.fuzz()
    bad = sum(s["BUG"] + s["CRASH"] for s in runner.stats.values()) + sum(runner.log_problems.values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
