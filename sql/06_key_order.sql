-- Key encoding property test: ORDER BY the encoded bytea equals DynamoDB's
-- order (N numerically, S by UTF-8 bytes, B by unsigned bytes, tuples
-- component by component).  Every check prints a count of violations (0).
SELECT setseed(0.42);

-- ---------------------------------------------------------------- N
-- 100,000 numbers: random mantissas of 1..38 digits, exponents -130..125,
-- both signs, zeros in several spellings; half of them crowded around 1
-- with digits 0/1/9 only, so that prefixes and near neighbours occur.
CREATE TEMP TABLE nums AS
WITH g AS (
  SELECT i,
         random() < 0.5 AS crowded,
         1 + floor(random() * 38)::int AS len,
         CASE WHEN random() < 0.5 THEN '-' ELSE '' END AS sign,
         random() AS r
  FROM generate_series(1, 100000) i
), m AS (
  SELECT i, crowded, sign, r, len,
         CASE WHEN crowded THEN
           (SELECT coalesce(string_agg(substr('019', 1 + floor(random() * 3)::int, 1), ''), '')
              FROM generate_series(1, len - 1) WHERE i > 0)
         ELSE
           left(lpad(floor(random() * 1e9)::bigint::text, 9, '0') || lpad(floor(random() * 1e9)::bigint::text, 9, '0')
             || lpad(floor(random() * 1e9)::bigint::text, 9, '0') || lpad(floor(random() * 1e9)::bigint::text, 9, '0')
             || lpad(floor(random() * 1e9)::bigint::text, 9, '0'), len - 1)
         END AS digits
  FROM g
)
SELECT i,
       CASE
         WHEN r < 0.002 THEN (ARRAY['0', '-0', '0.000', '0E5', '-0.0E-3'])[1 + (i % 5)]
         WHEN crowded THEN sign || '1' || digits || 'E' || (-2 + floor(random() * 3)::int)
         ELSE sign || (1 + floor(random() * 9)::int) || '.' || digits || 'E' || (-130 + floor(random() * 256)::int)
       END AS txt
FROM m;
ALTER TABLE nums ADD COLUMN num numeric, ADD COLUMN k bytea, ADD COLUMN kt bytea;
UPDATE nums SET num = txt::numeric,
                k = dynindex.encode_key(jsonb_build_object('N', txt)),
                kt = dynindex.encode_key(jsonb_build_object('N', txt), true);

SELECT count(*) AS numbers, count(DISTINCT num) AS distinct_numbers,
       min(num) < -1e125 AS has_huge_negative, max(num) > 1e125 AS has_huge_positive,
       min(abs(num)) FILTER (WHERE num <> 0) < 1e-129 AS has_tiny,
       count(*) FILTER (WHERE num = 0) > 0 AS has_zero
FROM nums;

-- the unterminated and terminated forms of N are the same (self-delimiting)
SELECT count(*) AS n_forms_differ FROM nums WHERE k <> kt;

-- sorted by encoding, the numbers never decrease, and adjacent encodings are
-- equal exactly when the numbers are equal
SELECT count(*) AS n_order_violations
FROM (SELECT num, k, lag(num) OVER w AS pnum, lag(k) OVER w AS pk
      FROM nums WINDOW w AS (ORDER BY k)) s
WHERE pk IS NOT NULL AND (pnum > num OR (pk = k) <> (pnum = num));

-- and the other way round: sorted by value, the encodings never decrease
SELECT count(*) AS n_reverse_violations
FROM (SELECT num, k, lag(k) OVER (ORDER BY num, k) AS pk FROM nums) s
WHERE pk > k;

-- 100,000 random pairs compare alike
SELECT count(*) AS n_pair_violations
FROM (SELECT a.num AS an, a.k AS ak, b.num AS bn, b.k AS bk
      FROM (SELECT i, 1 + floor(random() * 100000)::int AS j FROM generate_series(1, 100000) i) p
      JOIN nums a ON a.i = p.i JOIN nums b ON b.i = p.j) s
WHERE sign(CASE WHEN ak < bk THEN -1 WHEN ak > bk THEN 1 ELSE 0 END) <>
      sign(CASE WHEN an < bn THEN -1 WHEN an > bn THEN 1 ELSE 0 END);

-- equal numbers spelled differently encode alike
SELECT count(*) AS n_spelling_violations
FROM (VALUES ('150', '1.5E2'), ('12.5', '0012.50'), ('0', '-0'), ('1E-130', '0.1E-129'),
             ('-42', '-4.2e1'), ('100', '1E+2'), ('5', '+5')) v(a, b)
WHERE dynindex.encode_key(jsonb_build_object('N', a)) <> dynindex.encode_key(jsonb_build_object('N', b));

-- ---------------------------------------------------------------- S
-- 100,000 strings of 0..8 characters from a small alphabet of 1- to 4-byte
-- UTF-8 characters (so prefixes are common and code point order differs
-- from UTF-16 order: U+FFFD vs U+1D11E)
CREATE TEMP TABLE strs AS
SELECT i, (SELECT coalesce(string_agg(substr(E'ab\u0001\u007f\u00e9\u20ac\ufffd\U0001D11E', 1 + floor(random() * 8)::int, 1), ''), '')
             FROM generate_series(1, floor(random() * 9)::int + 0 * i)) AS s
FROM generate_series(1, 100000) i;
ALTER TABLE strs ADD COLUMN u bytea, ADD COLUMN k bytea, ADD COLUMN kt bytea;
UPDATE strs SET u = convert_to(s, 'UTF8'),
                k = dynindex.encode_key(jsonb_build_object('S', s)),
                kt = dynindex.encode_key(jsonb_build_object('S', s), true);
SELECT count(*) AS strings, count(DISTINCT s) AS distinct_strings,
       count(*) FILTER (WHERE s = '') > 0 AS has_empty FROM strs;
-- an unterminated S key is its UTF-8 bytes
SELECT count(*) AS s_raw_violations FROM strs WHERE k <> u;
SELECT count(*) AS s_terminated_violations
FROM (SELECT u, kt, lag(u) OVER w AS pu, lag(kt) OVER w AS pk
      FROM strs WINDOW w AS (ORDER BY kt)) s
WHERE pk IS NOT NULL AND (pu > u OR (pk = kt) <> (pu = u));

-- ---------------------------------------------------------------- B
-- 100,000 binaries of 0..8 bytes from {00, 01, 7f, 80, fe, ff}: embedded
-- NULs and high bytes (unsigned order)
CREATE TEMP TABLE bins AS
SELECT i, (SELECT coalesce(string_agg(substr('00017f80feff', 1 + 2 * floor(random() * 6)::int, 2), ''), '')
             FROM generate_series(1, floor(random() * 9)::int + 0 * i)) AS hex
FROM generate_series(1, 100000) i;
ALTER TABLE bins ADD COLUMN b bytea, ADD COLUMN k bytea, ADD COLUMN kt bytea;
UPDATE bins SET b = decode(hex, 'hex');
UPDATE bins SET k = dynindex.encode_key(jsonb_build_object('B', encode(b, 'base64'))),
                kt = dynindex.encode_key(jsonb_build_object('B', encode(b, 'base64')), true);
SELECT count(*) AS binaries, count(DISTINCT b) AS distinct_binaries,
       count(*) FILTER (WHERE position('\x00'::bytea IN b) > 0) > 0 AS has_nul FROM bins;
SELECT count(*) AS b_raw_violations FROM bins WHERE k <> b;
SELECT count(*) AS b_terminated_violations
FROM (SELECT b, kt, lag(b) OVER w AS pb, lag(kt) OVER w AS pk
      FROM bins WINDOW w AS (ORDER BY kt)) s
WHERE pk IS NOT NULL AND (pb > b OR (pk = kt) <> (pb = b));

-- ---------------------------------------------------------------- tuples
-- 100,000 tuples (terminated encodings concatenated) of kinds S+S, B+N,
-- N+S, S+B+N: ORDER BY the concatenation equals ORDER BY the components.
CREATE TEMP TABLE tuples AS
SELECT t.i,
       s1.u AS s1, s2.u AS s2, b1.b AS b1, n1.num AS n1,
       s1.kt || s2.kt AS k_ss, b1.kt || n1.kt AS k_bn, n1.kt || s2.kt AS k_ns,
       s1.kt || b1.kt || n1.kt AS k_sbn
FROM (SELECT i, 1 + floor(random() * 100000)::int AS a, 1 + floor(random() * 100000)::int AS b,
             1 + floor(random() * 100000)::int AS c, 1 + floor(random() * 100000)::int AS d
      FROM generate_series(1, 100000) i) t
JOIN strs s1 ON s1.i = t.a JOIN strs s2 ON s2.i = t.b
JOIN bins b1 ON b1.i = t.c JOIN nums n1 ON n1.i = t.d;
SELECT count(*) AS tuple_violations_ss
FROM (SELECT s1, s2, k_ss, lag(s1) OVER w AS p1, lag(s2) OVER w AS p2, lag(k_ss) OVER w AS pk
      FROM tuples WINDOW w AS (ORDER BY k_ss)) s
WHERE pk IS NOT NULL AND ((p1, p2) > (s1, s2) OR (pk = k_ss) <> ((p1, p2) = (s1, s2)));
SELECT count(*) AS tuple_violations_bn
FROM (SELECT b1, n1, k_bn, lag(b1) OVER w AS p1, lag(n1) OVER w AS p2, lag(k_bn) OVER w AS pk
      FROM tuples WINDOW w AS (ORDER BY k_bn)) s
WHERE pk IS NOT NULL AND ((p1, p2) > (b1, n1) OR (pk = k_bn) <> ((p1, p2) = (b1, n1)));
SELECT count(*) AS tuple_violations_ns
FROM (SELECT n1, s2, k_ns, lag(n1) OVER w AS p1, lag(s2) OVER w AS p2, lag(k_ns) OVER w AS pk
      FROM tuples WINDOW w AS (ORDER BY k_ns)) s
WHERE pk IS NOT NULL AND ((p1, p2) > (n1, s2) OR (pk = k_ns) <> ((p1, p2) = (n1, s2)));
SELECT count(*) AS tuple_violations_sbn
FROM (SELECT s1, b1, n1, k_sbn, lag(s1) OVER w AS p1, lag(b1) OVER w AS p2, lag(n1) OVER w AS p3,
             lag(k_sbn) OVER w AS pk
      FROM tuples WINDOW w AS (ORDER BY k_sbn)) s
WHERE pk IS NOT NULL AND ((p1, p2, p3) > (s1, b1, n1) OR (pk = k_sbn) <> ((p1, p2, p3) = (s1, b1, n1)));

-- hand-picked tuples: a prefix sorts first; an embedded NUL sorts after the
-- end of a shorter value and before 0x01
SELECT v.label, encode(k, 'hex') AS encoded
FROM (VALUES
  (1, 'B 00 + S b', dynindex.encode_key('{"B": "AA=="}', true) || dynindex.encode_key('{"S": "b"}', true)),
  (2, 'B 0000 + S a', dynindex.encode_key('{"B": "AAA="}', true) || dynindex.encode_key('{"S": "a"}', true)),
  (3, 'B 01 + S a', dynindex.encode_key('{"B": "AQ=="}', true) || dynindex.encode_key('{"S": "a"}', true)),
  (4, 'B (empty) + S z', dynindex.encode_key('{"B": ""}', true) || dynindex.encode_key('{"S": "z"}', true)),
  (5, 'S ab + N -1', dynindex.encode_key('{"S": "ab"}', true) || dynindex.encode_key('{"N": "-1"}', true)),
  (6, 'S a + N 5', dynindex.encode_key('{"S": "a"}', true) || dynindex.encode_key('{"N": "5"}', true)),
  (7, 'S abc + N 0', dynindex.encode_key('{"S": "abc"}', true) || dynindex.encode_key('{"N": "0"}', true))
) v(n, label, k)
ORDER BY k;

-- errors
SELECT dynindex.encode_key('{"BOOL": true}');
SELECT dynindex.encode_key('{"N": "1E126"}');
SELECT dynindex.encode_key('{"S": 5}');
