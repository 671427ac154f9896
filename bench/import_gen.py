#!/usr/bin/env python3
"""Write N items (~200 bytes each) as a DynamoDB export's data files
(data/<n>.json.gz, lines {"Item": {...}}) and the same rows as a COPY file
(pk, sk, item jsonb) for the baseline.  Usage: import_gen.py DIR N [FILES]"""
import gzip, json, os, random, sys

out, n = sys.argv[1], int(sys.argv[2])
files = int(sys.argv[3]) if len(sys.argv) > 3 else 10
os.makedirs(os.path.join(out, "data"), exist_ok=True)
rnd = random.Random(42)
per = (n + files - 1) // files
copy = open(os.path.join(out, "copy.tsv"), "w")
i = 0
for f in range(files):
    with gzip.open(os.path.join(out, "data", "%05d.json.gz" % f), "wt", compresslevel=1) as g:
        for _ in range(per):
            if i >= n:
                break
            item = {"pk": {"S": "user#%07d" % (i // 10)}, "sk": {"S": "order#%05d" % (i % 10)},
                    "status": {"S": rnd.choice(["NEW", "PAID", "SHIPPED", "DONE"])},
                    "created": {"N": str(1700000000 + i)},
                    "gpk": {"S": "region#%03d" % (i % 500)}, "gsk": {"N": str(i % 9973)},
                    "email": {"S": "user%07d@example.com" % (i // 10)},
                    "note": {"S": "x" * 40}}
            line = json.dumps({"Item": item})
            g.write(line + "\n")
            copy.write("%s\t%s\t%s\n" % (item["pk"]["S"], item["sk"]["S"], json.dumps(item).replace("\\", "\\\\")))
            i += 1
copy.close()
