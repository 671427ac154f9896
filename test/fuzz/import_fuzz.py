#!/usr/bin/env python3
"""Hostile import files (ImportTable's readers: DynamoDB JSON lines, Ion text,
CSV; gzip, zstd, none): random bytes, truncated and bit-flipped compressed
streams, broken JSON and Ion, deep nesting, huge records, invalid UTF-8, wrong
types, oversized items, missing keys.  Every file goes to a directory store;
one import per format and compression reads them all.  PASS when no backend
crashed, every import ended COMPLETED or FAILED (never stuck), the error
count plus the imported count is the processed count, and no item content
reached the server log.  Usage: import_fuzz.py --dsn DSN --server-log FILE [--seed N] [--files N]"""
import argparse, gzip, json, os, random, re, subprocess, sys, time
import psycopg2

MARK = "SECRETITEMCONTENT"


def valid_lines(rng, n):
    out = []
    for i in range(n):
        item = {"pk": {"S": "%s-%d-%d" % (MARK, rng.randrange(10**6), i)}, "v": {"N": str(rng.randrange(1000))}}
        out.append(json.dumps({"Item": item}))
    return ("\n".join(out) + "\n").encode()


def ion_lines(rng, n):
    return "".join('$ion_1_0 {Item:{pk:"%s-%d",n:%d.,s:$dynamodb_SS::["a","b"],b:{{aGk=}}}}\n'
                   % (MARK, rng.randrange(10**6), i) for i in range(n)).encode()


def _varuint(n):
    out = [n & 0x7F | 0x80]
    n >>= 7
    while n:
        out.insert(0, n & 0x7F)
        n >>= 7
    return bytes(out)


def _tl(t, body):
    return (bytes([t << 4 | len(body)]) if len(body) < 14 else bytes([t << 4 | 14]) + _varuint(len(body))) + body


def ion_binary(rng, n):
    """Binary Ion: version marker, a local symbol table, then {Item: {...}} values."""
    syms = [b"Item", b"pk", b"n", b"$dynamodb_SS", b"ss", b"b"]
    table = _tl(13, _varuint(7) + _tl(11, b"".join(_tl(8, x) for x in syms)))
    out = bytes([0xE0, 1, 0, 0xEA]) + _tl(14, _varuint(1) + _varuint(3) + table)
    for i in range(n):
        pk = ("%s-%d-%d" % (MARK, rng.randrange(10**6), i)).encode()
        body = (_varuint(11) + _tl(8, pk) + _varuint(12) + _tl(5, bytes([0xC1]) + i.to_bytes(4, "big"))
                + _varuint(14) + _tl(14, _varuint(1) + _varuint(13) + _tl(11, _tl(8, b"a") + _tl(8, b"b")))
                + _varuint(15) + _tl(10, os.urandom(rng.randrange(0, 20))))
        out += _tl(13, _varuint(10) + _tl(13, body))
    return out


def csv_lines(rng, n):
    return ("pk,a,b\n" + "".join('"%s-%d","x,y",%d\n' % (MARK, rng.randrange(10**6), i) for i in range(n))).encode()


def mutate(rng, data):
    data = bytearray(data)
    kind = rng.randrange(9)
    if kind == 0 and data:
        return bytes(data[:rng.randrange(len(data))])                     # truncated
    if kind == 1 and data:
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)           # flipped bytes
        return bytes(data)
    if kind == 2:
        return os.urandom(rng.randrange(1, 4096))                        # noise
    if kind == 3:
        d = rng.randrange(1, 200)                                        # deep nesting
        return (b'{"Item": {"pk": {"S": "k"}, "d": ' + b'{"L": [' * d + b'{"S": "x"}' + b']}' * d + b'}}\n'
                + b'$ion_1_0 {Item:{pk:"k",d:' + b'[' * d + b'1' + b']' * d + b'}}\n')
    if kind == 4:
        return b'{"Item": {"pk": {"S": "' + b'x' * rng.choice([1000, 500000, 5000000]) + b'"}}}\n'  # huge
    if kind == 5:
        return b'{"Item": {"pk": {"S": "\xff\xfe\xc3"}}}\n"\xc3\x28",1\n{Item:{pk:"\xe2\x82"}}\n'  # bad UTF-8
    if kind == 6:
        return rng.choice([b'{"Item": {"pk": {"N": "1e500"}}}\n', b'{"Item": {"pk": {"S": 5}}}\n',
                           b'{"Item": []}\n', b'{"Item": {"pk": {"SS": []}}}\n', b'{"Item": {"pk": {"B": "!!"}}}\n',
                           b'$ion_1_0 {Item:{pk:"a",x:$dynamodb_SS::[1.]}}\n', b"{Item:{pk:'''a''' '''b'''}}\n",
                           b'{Item:{pk:"a",t:2020T}}\n', b'\xe0\x01\x00\xea\xee\x83\x81\x83\xde\x8b',
                           b'"unterminated\n', b'a,b\n"x\n', b'{Item:{pk:"\\uD800"}}\n', b'/* open comment'])
    if kind == 7:
        return bytes(data) * rng.randrange(2, 4)
    return bytes(data[: len(data) // 2]) + os.urandom(64) + bytes(data[len(data) // 2:])


def _attr_value(rng, depth, clean):
    """A random AttributeValue's JSON text: clean, what import_json.c reads (and
    must read as jsonb_in and the item checks do); otherwise with everything at
    the edges of what it refuses (the general path then reads it)."""
    strs = ["a", "", "x y", r"\u00e9t\u00e9", r"\"q\"", r"\\", r"\u0000", r"\ue000z", r"\ud83d\ude00", r"\n",
            r"caf\u00e9", r"\/", "long" * 50]
    raw = ["a", "", "é", "日本", "😀", "x y", "ok", "long" * 50]
    nums = ["1", "-0", "01", "1.50", "1e5", "1E+2", "-1e-130", "1e125", "0.000", "-12.5e3", "99999999999999999999999999999999999999"]
    if not clean:
        raw += ["\ue000", "\ue123x", "tab\there"]
        nums += ["1e126", "1e200", ".5", "5.", "+1", "0x1", "", " 1", "NaN", "1e-131",
                 "123456789012345678901234567890123456789"]
    k = rng.randrange(6 if depth >= 34 else 18 if clean else 24)
    if k == 5 and clean:
        k = 0
    if k == 0:
        return '{"S": "%s"}' % rng.choice(raw)
    if k == 1:
        return '{"S": "%s"}' % rng.choice(strs if not clean else raw)
    if k == 2:
        return '{"N": "%s"}' % rng.choice(nums)
    if k == 3:
        return '{"BOOL": %s}' % rng.choice(["true", "false"] if clean else ["true", "false", "1", "null", '"true"', "tru", "truex"])
    if k == 4:
        return '{"NULL": %s}' % rng.choice(["true"] if clean else ["true", "false", "null"])
    if k == 5:
        return rng.choice(['{"B": "aGk="}', '{"B": "!!"}', '{"BS": ["aGk=", "aGk="]}', '{"BS": ["aGk="]}', '{}', 'null',
                           '{"S": 5}', '{"S": null}', '{"N": 5}', '{"S": "a", "N": "1"}', '{"S": "a", "S": "b"}',
                           '{"S": "a", "Q": 1}', '{"Q": 1}', '[]', '"S"', '{"SS": null}', '{"M": null, "S": "a"}',
                           '{ "S" :\t"a" }', '{"L": [null]}', '{"M": {"a": null}}', '{"M": []}', '{"L": {}}'])
    if k in (6, 7, 8):
        names = ["a", "b", "c", "é", "aa", "ba"] + ([] if clean else ["a", ""])
        picked = rng.sample(names, rng.randrange(0, 4)) if clean else [rng.choice(names) for _ in range(rng.randrange(0, 4))]
        return '{"M": {%s}}' % ", ".join('"%s": %s' % (n, _attr_value(rng, depth + 1, clean)) for n in picked)
    if k in (9, 10, 11):
        return '{"L": [%s]}' % ", ".join(_attr_value(rng, depth + 1, clean) for _ in range(rng.randrange(0, 4)))
    if k in (12, 13):
        m = rng.randrange(1 if clean else 0, 4)
        members = rng.sample(raw, m) if clean else [rng.choice(raw + ["a", "b"]) for _ in range(m)]
        return '{"SS": [%s]}' % ", ".join('"%s"' % x for x in members)
    if k in (14, 15):
        m = rng.randrange(1 if clean else 0, 4)
        members = rng.sample(["1", "2.5", "-3", "1e2", "0.1"], m) if clean else [rng.choice(nums + ["1", "1.0", "10e-1"]) for _ in range(m)]
        return '{"NS": [%s]}' % ", ".join('"%s"' % x for x in members)
    if k == 16:
        return '{"SS": [%s]}' % rng.choice(['"a", null', '1', '"a",', ''])
    if k == 17:
        d = rng.randrange(1, 28)
        return '{"M": {"n": ' * d + '{"S": "x"}' + '}}' * d
    d = rng.randrange(28, 36)                                               # nesting around DynamoDB's 32 levels
    return '{"M": {"n": ' * d + '{"S": "x"}' + '}}' * d if k < 20 else '{"L": [' * d + '{"N": "1"}' + ']}' * d


def differential_lines(rng, n):
    """DynamoDB JSON lines for the reader comparison (import_json.c against jsonb_in)."""
    out = []
    for i in range(n):
        clean = rng.random() < 0.6
        attrs = ['"pk": {"S": "%s-%d"}' % (MARK, i)]
        names = (["a", "b", "c", "é", "n", "nn", "bb"] if clean else
                 ["a", "b", "c", "pk", "é", r"\u0061", "", "n" * 70000 if rng.random() < 0.01 else "n"])
        for name in (rng.sample(names, rng.randrange(0, 6)) if clean else [rng.choice(names) for _ in range(rng.randrange(0, 6))]):
            attrs.append('"%s": %s' % (name, _attr_value(rng, 1, clean)))
        if not clean and rng.random() < 0.2:
            attrs[0] = rng.choice(['"pk": {"N": "1"}', '"pk": {"S": ""}', '"pk": {"S": "%s"}' % ("k" * 2100), '"q": {"S": "a"}'])
        rng.shuffle(attrs)
        item = "{%s}" % (", " if rng.random() < 0.5 else ",").join(attrs)
        line = '{"Item": %s}' % item if clean else rng.choice(['{"Item": %s}', '{"Item":%s}', ' {"Item" : %s } ', '{"Item": %s, "x": 1}', '{"x": 1, "Item": %s}',
                           '{"Item": %s}\r', '{"Item": %s}}', '{"Item": %s} x', '{"Item": %s', '{"item": %s}',
                           '{"Item": %s}', '{"Item": %s}', '{"Item": %s}', '{"Item": %s}']) % item
        if not clean and rng.random() < 0.05:
            line = line.replace('"a"', '"a\x01"')
        out.append(line.encode("utf-8", "surrogatepass"))
        if rng.random() < 0.02:
            out.append(b'{"Item": {"pk": {"S": "\xc3\x28"}}}')              # invalid UTF-8
    return b"\n".join(out) + b"\n"


def scan_all(cur, table):
    items, start = [], None
    while True:
        req = {"TableName": table}
        if start:
            req["ExclusiveStartKey"] = start
        cur.execute("SELECT convert_to(dynindex.api('Scan', %s)::text, 'UTF8')", (json.dumps(req),))
        r = json.loads(bytes(cur.fetchone()[0]).decode("utf-8", "surrogateescape"))
        items += r.get("Items", [])
        start = r.get("LastEvaluatedKey")
        if not start:
            return sorted(json.dumps(x, sort_keys=True) for x in items)


def differential(cur, rng, files):
    """The same DynamoDB JSON files imported with dynindex.import_fast_json off and on:
    the same items, the same counts, the same error records (types and messages)."""
    for f in range(files):
        data = differential_lines(rng, rng.randrange(1, 60))
        cur.execute("SELECT dynindex.write_object('fuzz', %s, %s)", ("DIFF/%03d" % f, psycopg2.Binary(gzip.compress(data, 1))))
    res = {}
    for fast in ("off", "on"):
        cur.execute("ALTER SYSTEM SET dynindex.import_fast_json = %s" % fast)
        cur.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
        req = {"S3BucketSource": {"S3Bucket": "fuzz", "S3KeyPrefix": "DIFF/"}, "InputFormat": "DYNAMODB_JSON",
               "InputCompressionType": "GZIP",
               "TableCreationParameters": {"TableName": "Diff_%s" % fast, "BillingMode": "PAY_PER_REQUEST",
                                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                                                    {"AttributeName": "a", "AttributeType": "S"}],
                                           "GlobalSecondaryIndexes": [{"IndexName": "ByA", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
                                                                       "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["c", "n", "é"]}}]}}
        cur.execute("SELECT dynindex.api('ImportTable', %s)->'ImportTableDescription'->>'ImportArn'", (json.dumps(req),))
        arn = cur.fetchone()[0]
        cur.execute("SELECT dynindex.wait_for_import(%s, '300 s')", (arn,))
        cur.execute("SELECT import_id, status, processed_items, imported_items, error_count FROM dynindex.imports WHERE import_arn = %s", (arn,))
        iid, st, proc, imp, err = cur.fetchone()
        cur.execute("SELECT object_key, record, error_type, message FROM dynindex.import_errors WHERE import_id = %s "
                    "ORDER BY object_key, record", (iid,))
        errors = cur.fetchall()
        items = scan_all(cur, "Diff_%s" % fast) if st == "COMPLETED" else []
        res[fast] = (st, proc, imp, err, errors, items)
    cur.execute("ALTER SYSTEM RESET dynindex.import_fast_json")
    cur.execute("SELECT pg_reload_conf()")
    # the stored rows themselves (the table's and the GSI's): jsonb's = compares the
    # binary containers in their stored order, so a pair out of jsonb's order differs
    stored_diff = 0
    if res["off"][0] == res["on"][0] == "COMPLETED":
        for q in ("SELECT storage FROM dynindex.tables WHERE table_name = %s",
                  "SELECT storage FROM dynindex.indexes WHERE table_name = %s"):
            cur.execute(q, ("Diff_off",))
            a = cur.fetchone()[0]
            cur.execute(q, ("Diff_on",))
            b = cur.fetchone()[0]
            cur.execute("SELECT count(*) FROM (SELECT * FROM %s) a FULL JOIN (SELECT * FROM %s) b USING (pk, sk) "
                        "WHERE a.item IS DISTINCT FROM b.item OR a.size IS DISTINCT FROM b.size "
                        "OR a.item::text IS DISTINCT FROM b.item::text OR pg_column_size(a.item) IS DISTINCT FROM pg_column_size(b.item)"
                        % (a, b))
            stored_diff += cur.fetchone()[0]
    same = res["off"] == res["on"] and stored_diff == 0
    st, proc, imp, err = res["on"][:4]
    print("%s reader comparison (import_fast_json off / on): %s processed=%d imported=%d errors=%d, items %s, "
          "error records %s, stored rows differing %d"
          % ("ok  " if same else "BUG ", st, proc, imp, err, "same" if res["off"][5] == res["on"][5] else "DIFFER",
             "same" if res["off"][4] == res["on"][4] else "DIFFER", stored_diff))
    if not same:
        for a, b in zip(res["off"][4], res["on"][4]):
            if a != b:
                print("  first differing error record: off %r / on %r" % (a[:3], b[:3]))
                break
    return same


def compress(rng, data, comp):
    if comp == "GZIP":
        return gzip.compress(data, compresslevel=1)
    if comp == "ZSTD":
        p = subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True)
        return p.stdout
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--server-log", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--files", type=int, default=40)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    conn = psycopg2.connect(a.dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("COPY (SELECT 1) TO PROGRAM 'rm -rf exchange/fuzz && mkdir -p exchange/fuzz'")
    cur.execute("SELECT dynindex.set_object_store('fuzz', 'directory', directory => 'exchange/fuzz')")
    gens = {"DYNAMODB_JSON": valid_lines, "ION": ion_lines, "ION_BINARY": ion_binary, "CSV": csv_lines}
    arns = []
    n = 0
    for fmt, gen in gens.items():
        for comp in ("NONE", "GZIP", "ZSTD"):
            prefix = "%s-%s/" % (fmt, comp)
            for f in range(a.files):
                data = gen(rng, rng.randrange(1, 50))
                if rng.random() < 0.8:
                    data = mutate(rng, data) if rng.random() < 0.5 else data
                blob = compress(rng, data, comp)
                if rng.random() < 0.5:
                    blob = mutate(rng, blob)                             # damage the compressed stream
                cur.execute("SELECT dynindex.write_object('fuzz', %s, %s)", (prefix + "%03d" % f, psycopg2.Binary(blob)))
                n += 1
            req = {"S3BucketSource": {"S3Bucket": "fuzz", "S3KeyPrefix": prefix}, "InputFormat": fmt.replace("_BINARY", ""),
                   "InputCompressionType": comp,
                   "TableCreationParameters": {"TableName": "Fuzz_%s_%s" % (fmt, comp), "BillingMode": "PAY_PER_REQUEST",
                                               "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                               "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}}
            if fmt == "CSV" and rng.random() < 0.5:
                req["InputFormatOptions"] = {"Csv": {"Delimiter": rng.choice([",", ";", "|", "\t"])}}
            cur.execute("SELECT dynindex.api('ImportTable', %s)->'ImportTableDescription'->>'ImportArn'", (json.dumps(req),))
            arns.append(cur.fetchone()[0])
    bugs = 0 if differential(cur, rng, max(4, a.files // 4)) else 1
    for arn in arns:
        cur.execute("SELECT dynindex.wait_for_import(%s, '300 s')", (arn,))
        cur.execute("SELECT status, processed_items, imported_items, error_count, coalesce(failure_message, '') "
                    "FROM dynindex.imports WHERE import_arn = %s", (arn,))
        st, proc, imp, err, fm = cur.fetchone()
        ok = st in ("COMPLETED", "FAILED") and (st == "FAILED" or proc == imp + err) and MARK not in fm
        print("%s %s processed=%d imported=%d errors=%d %s" % ("ok  " if ok else "BUG ", arn.split("/")[1], proc, imp, err, fm))
        bugs += not ok
    cur.execute("SELECT count(*) FROM dynindex.import_errors WHERE message LIKE %s", ("%" + MARK + "%",))
    leaked = cur.fetchone()[0]
    log = open(a.server_log, errors="replace").read()
    crashes = len(re.findall(r"terminated by signal", log))
    inlog = log.count(MARK)
    print("import files %d, imports %d, bugs %d, crashes %d, item content in error log %d, in server log %d"
          % (n, len(arns), bugs, crashes, leaked, inlog))
    ok = bugs == 0 and crashes == 0 and leaked == 0 and inlog == 0
    print("IMPORT RESULT: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
