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
    bugs = 0
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
