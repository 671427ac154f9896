-- Parallel Scan by hash ranges: each segment reads only its range of the
-- partition key's hash through the (key_hash(pk), pk, sk) index, the
-- segments are disjoint and together complete, and a segment pages inside itself
\set VERBOSITY terse
CREATE EXTENSION IF NOT EXISTS dynindex;

SELECT dynindex.api('CreateTable', '{"TableName":"ps_t","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"},
                          {"AttributeName":"g","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
                             "Projection":{"ProjectionType":"KEYS_ONLY"}}]}') IS NOT NULL AS created;
-- 60 partition keys of 3 items: 180 items
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'ps_t', 'Item',
         jsonb_build_object('p', jsonb_build_object('S', 'p' || i), 'c', jsonb_build_object('N', j::text),
                            'g', jsonb_build_object('S', 'g' || (i % 5)))))) AS written
  FROM generate_series(1, 60) i, generate_series(1, 3) j;
SELECT dynindex.wait_for_indexes('ps_t');

-- the storage relations and their segment indexes (names without the table number)
CREATE TEMP TABLE rels AS
SELECT 'table' AS what, t.storage FROM dynindex.tables t WHERE t.table_name = 'ps_t'
UNION ALL
SELECT 'gsi', i.storage FROM dynindex.indexes i WHERE i.table_name = 'ps_t';
CREATE TEMP TABLE segidx AS
SELECT r.what, r.storage, x.indexrelid AS idx
  FROM rels r JOIN pg_index x ON x.indrelid = r.storage::regclass AND x.indexprs IS NOT NULL
   AND (r.what = 'table' OR x.indisunique);
SELECT what, regexp_replace(pg_get_indexdef(idx), 't[0-9]+(_[0-9]+)?', 'T', 'g') AS segment_index
  FROM segidx ORDER BY what;

-- a segment is a range of hashes: segment s of n holds floor((hash + 2^31) * n / 2^32) = s
SELECT n, bool_and(dynindex.key_segment(k, n) = ((dynindex.key_hash(k)::int8 + 2147483648) * n) >> 32) AS by_range
  FROM (VALUES (1), (2), (3), (4), (7), (64), (1000000)) v(n),
       LATERAL (SELECT pk AS k FROM dynindex.scan('ps_t') s, LATERAL (SELECT convert_to(s->'p'->>'S', 'UTF8') AS pk) e) keys
 GROUP BY n ORDER BY n;

-- the plan of one segment's read: an index range, no full scan
DO $$
DECLARE st text := (SELECT storage FROM rels WHERE what = 'table'); line text;
BEGIN
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT pk, sk, size, item FROM %s '
        'WHERE (dynindex.key_hash(pk), pk, sk) >= (-1073741824, ''\x''::bytea, ''\x''::bytea) '
        'AND dynindex.key_hash(pk) < 0 ORDER BY dynindex.key_hash(pk), pk, sk LIMIT 10', st) LOOP
        RAISE NOTICE '%', regexp_replace(line, 't[0-9]+', 'T', 'g');
    END LOOP;
END $$;

-- read one segment by paging (Limit lim), with what this transaction read meanwhile:
-- sequential scans of the storage, scans of its primary key, rows read through the segment index
CREATE FUNCTION seg_read(what text, seg int, total int, lim int,
                         OUT keys text[], OUT pages int, OUT seq_scans bigint, OUT pkey_scans bigint, OUT index_rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    st regclass := (SELECT storage FROM rels r WHERE r.what = seg_read.what)::regclass;
    sx oid := (SELECT idx FROM segidx s WHERE s.what = seg_read.what);
    pkx oid := (SELECT indexrelid FROM pg_index WHERE indrelid = st AND indisprimary);
    seq0 bigint := pg_stat_get_xact_numscans(st);
    pk0 bigint := pg_stat_get_xact_numscans(pkx);
    rows0 bigint := pg_stat_get_xact_tuples_returned(sx);
    req jsonb := jsonb_build_object('TableName', 'ps_t', 'Segment', seg, 'TotalSegments', total, 'Limit', lim);
    r jsonb;
BEGIN
    IF what = 'gsi' THEN req := req || '{"IndexName":"byG"}'; END IF;
    keys := '{}'; pages := 0;
    LOOP
        r := dynindex.api('Scan', req);
        pages := pages + 1;
        keys := keys || coalesce((SELECT array_agg((i->'p'->>'S') || '/' || (i->'c'->>'N')) FROM jsonb_array_elements(r->'Items') i), '{}');
        EXIT WHEN r->'LastEvaluatedKey' IS NULL;
        req := req || jsonb_build_object('ExclusiveStartKey', r->'LastEvaluatedKey');
    END LOOP;
    seq_scans := pg_stat_get_xact_numscans(st) - seq0;
    pkey_scans := pg_stat_get_xact_numscans(pkx) - pk0;
    index_rows := pg_stat_get_xact_tuples_returned(sx) - rows0;
END $$;

-- 4 segments of the table, pages of 7: each reads its own items and no others
-- (rows read through the index = its items), no full scan, no primary-key scan
SELECT seg, cardinality(keys) AS items, pages > 1 AS paged, seq_scans, pkey_scans, index_rows = cardinality(keys) AS read_only_its_rows,
       (SELECT bool_and(dynindex.key_segment(convert_to(split_part(x, '/', 1), 'UTF8'), 4) = seg) FROM unnest(keys) x) AS its_hash_range
  FROM generate_series(0, 3) seg, LATERAL seg_read('table', seg, 4, 7)
 ORDER BY seg;
-- the same for the GSI (segments by the hash of the index's partition key); an
-- index relation has no primary key: this unique btree is its only one on the key
SELECT seg, cardinality(keys) AS items, seq_scans, pkey_scans IS NULL AS no_pkey, index_rows = cardinality(keys) AS read_only_its_rows
  FROM generate_series(0, 2) seg, LATERAL seg_read('gsi', seg, 3, 10)
 ORDER BY seg;
-- an index relation's key, dynindex.index_key: one byte string whose order is the order
-- of (key_hash(ipk), ipk, isk, pk, sk), one value per tuple (parts with zero bytes too)
WITH p(v) AS (VALUES ('\x'::bytea), ('\x00'), ('\x0000'), ('\x0001'), ('\x00ff'), ('\x01'), ('\xff00')),
t AS (SELECT a.v AS a, b.v AS b, c.v AS c, d.v AS d, dynindex.index_key(a.v, b.v, c.v, d.v) AS k
        FROM p a, p b, p c, p d)
SELECT count(*) AS tuples, count(DISTINCT k) AS keys,
       array_agg(ARRAY[a, b, c, d] ORDER BY k) = array_agg(ARRAY[a, b, c, d] ORDER BY dynindex.key_hash(a), a, b, c, d) AS same_order
  FROM t;
-- a Query of the GSI is a range of that key, read by the generic plan (query_scan.c
-- prepares it so): one index range in the key's order, whatever the range holds
DO $$
DECLARE st text := (SELECT storage FROM rels WHERE what = 'gsi'); line text;
BEGIN
    EXECUTE format('PREPARE gsi_range(bytea, bytea, int8) AS SELECT ipk, isk, pk, sk, size, item FROM %s '
        'WHERE dynindex.index_key(ipk, isk, pk, sk) >= $1 AND dynindex.index_key(ipk, isk, pk, sk) < $2 '
        'ORDER BY dynindex.index_key(ipk, isk, pk, sk) DESC LIMIT $3', st);
    SET LOCAL plan_cache_mode = force_generic_plan;
    FOR line IN EXPLAIN (COSTS OFF) EXECUTE gsi_range('\x00', '\x01', 10) LOOP
        RAISE NOTICE '%', regexp_replace(line, 't[0-9]+', 'T', 'g');
    END LOOP;
    DEALLOCATE gsi_range;
END $$;
-- a whole Scan of the GSI (no segments) reads that btree: (hash, key) order, paged
DO $$
DECLARE st text := (SELECT storage FROM rels WHERE what = 'gsi'); want text[];
BEGIN
    EXECUTE format('SELECT array_agg((item->''p''->>''S'') || ''/'' || (item->''c''->>''N'') '
                   'ORDER BY dynindex.key_hash(ipk), ipk, isk, pk, sk) FROM %s', st) INTO want;
    RAISE NOTICE 'whole GSI scan: % items, in (hash, key) order: %', cardinality(want),
        (SELECT keys FROM seg_read('gsi', 0, 1, 7)) = want;
END $$;

-- disjoint and complete, paged or not, for the table and the GSI
SELECT what, total, lim, count(x) AS n, count(DISTINCT x) AS distinct_n
  FROM (VALUES ('table'), ('gsi')) w(what), (VALUES (1), (2), (3), (5), (64)) t(total), (VALUES (4), (1000)) l(lim),
       LATERAL generate_series(0, total - 1) seg, LATERAL seg_read(what, seg, total, lim) s, LATERAL unnest(s.keys) x
 GROUP BY what, total, lim ORDER BY what DESC, total, lim;

-- inside a segment, items come in (hash, key) order, and a LastEvaluatedKey resumes just after itself
SELECT (SELECT keys FROM seg_read('table', 2, 4, 5)) = (SELECT keys FROM seg_read('table', 2, 4, 1000)) AS same_order_paged;
SELECT array_agg(k ORDER BY o) = array_agg(k ORDER BY dynindex.key_hash(convert_to(split_part(k, '/', 1), 'UTF8')), convert_to(split_part(k, '/', 1), 'UTF8'), split_part(k, '/', 2)::int) AS hash_key_order
  FROM unnest((SELECT keys FROM seg_read('table', 1, 4, 1000))) WITH ORDINALITY u(k, o);
SELECT dynindex.api('Scan', jsonb_build_object('TableName', 'ps_t', 'Segment', 1, 'TotalSegments', 4, 'Limit', 2,
         'ExclusiveStartKey', (SELECT jsonb_build_object('p', jsonb_build_object('S', split_part(k, '/', 1)), 'c', jsonb_build_object('N', split_part(k, '/', 2)))
                                 FROM unnest((SELECT keys FROM seg_read('table', 1, 4, 1000))) WITH ORDINALITY u(k, o) WHERE o = 3)))
       -> 'Items' = (SELECT jsonb_agg(jsonb_build_object('c', jsonb_build_object('N', split_part(k, '/', 2)), 'p', jsonb_build_object('S', split_part(k, '/', 1)), 'g', jsonb_build_object('S', 'g' || (substr(split_part(k, '/', 1), 2)::int % 5))) ORDER BY o)
                      FROM unnest((SELECT keys FROM seg_read('table', 1, 4, 1000))) WITH ORDINALITY u(k, o) WHERE o IN (4, 5)) AS resumes_after_key;

-- the Scan without segments keeps key order
SELECT (SELECT array_agg(s->'p'->>'S' ORDER BY n) FROM dynindex.scan('ps_t') WITH ORDINALITY u(s, n))
     = (SELECT array_agg(s->'p'->>'S' ORDER BY convert_to(s->'p'->>'S', 'UTF8'), (s->'c'->>'N')::int) FROM dynindex.scan('ps_t') s) AS key_order;

SELECT dynindex.api('DeleteTable', '{"TableName":"ps_t"}') ->> 'TableDescription' IS NOT NULL AS deleted;

-- an index entry's key is one btree value of up to ~2700 bytes, compressed as a whole
-- (on one node; on Citus ipk follows it in the btree: the citus schedule leaves this file out)
CREATE FUNCTION hexkey(n int, seed text) RETURNS text LANGUAGE sql AS $$
    SELECT left(string_agg(md5(seed || i), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
SELECT dynindex.api('CreateTable', '{"TableName": "bigk", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "l", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "LocalSecondaryIndexes": [{"IndexName": "byL", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
-- an LSI entry holds the partition key twice (its own and the item's): 3025 bytes of keys fit ...
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigk', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(1000, 'p')), 'sk', jsonb_build_object('S', 'a'), 'l', jsonb_build_object('S', hexkey(1024, 'l'))))) AS lsi_keys_3025;
-- ... 5048 do not
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigk', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(1500, 'p')), 'sk', jsonb_build_object('S', hexkey(1024, 's')), 'l', jsonb_build_object('S', hexkey(1024, 'l')))));
-- a GSI entry whose keys take 2501 incompressible bytes is in the index
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigk', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(1000, 'q')), 'sk', jsonb_build_object('S', 'd'), 'g', jsonb_build_object('S', hexkey(1500, 'g'))))) AS gsi_keys_2501;
SELECT dynindex.wait_for_indexes('bigk');
SELECT (dynindex.api('Scan', '{"TableName": "bigk", "IndexName": "byL", "Select": "COUNT"}') ->> 'Count')::int AS lsi_entries,
       (dynindex.api('Scan', '{"TableName": "bigk", "IndexName": "byG", "Select": "COUNT"}') ->> 'Count')::int AS gsi_entries;
SELECT dynindex.api('DeleteTable', '{"TableName": "bigk"}') IS NOT NULL AS deleted;
DROP FUNCTION hexkey(int, text);
