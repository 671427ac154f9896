-- ConditionExpression / FilterExpression: operators, functions, paths, DynamoDB's
-- comparison semantics and error messages (via dynindex.eval_condition).
\set VERBOSITY terse
\set item '{"a":{"S":"abc"},"n":{"N":"5"},"b":{"B":"AAEC"},"l":{"L":[{"S":"x"},{"N":"2"},{"M":{"k":{"S":"v"}}}]},"m":{"M":{"b":{"M":{"c":{"N":"1"}}}}},"ss":{"SS":["x","y"]},"ns":{"NS":["1","2"]},"bs":{"BS":["AA=="]},"bo":{"BOOL":true},"nu":{"NULL":true},"e":{"S":"é日本"}}'
CREATE TEMP TABLE c(id serial, expr text, vals jsonb, names jsonb);
INSERT INTO c(expr, vals, names) VALUES
 -- comparisons
 ('a = :v', '{":v":{"S":"abc"}}', NULL),
 ('a <> :v', '{":v":{"S":"abc"}}', NULL),
 ('n = :v', '{":v":{"N":"5.0"}}', NULL),
 ('n < :v', '{":v":{"N":"10"}}', NULL),
 ('n <= :v', '{":v":{"N":"5"}}', NULL),
 ('n > :v', '{":v":{"N":"-1E+2"}}', NULL),
 ('n >= :v', '{":v":{"N":"6"}}', NULL),
 ('a < :v', '{":v":{"S":"abd"}}', NULL),
 ('b > :v', '{":v":{"B":"AAE="}}', NULL),
 ('ss = :v', '{":v":{"SS":["y","x"]}}', NULL),
 ('l = :v', '{":v":{"L":[{"S":"x"},{"N":"2"},{"M":{"k":{"S":"v"}}}]}}', NULL),
 ('bo = :v', '{":v":{"BOOL":true}}', NULL),
 ('nu = :v', '{":v":{"NULL":true}}', NULL),
 ('m = :v', '{":v":{"M":{"b":{"M":{"c":{"N":"1"}}}}}}', NULL),
 -- different types compare false; <> across types is true; missing attributes
 ('a = :v', '{":v":{"N":"5"}}', NULL),
 ('a <> :v', '{":v":{"N":"5"}}', NULL),
 ('a < :v', '{":v":{"N":"5"}}', NULL),
 ('zz = :v', '{":v":{"S":"x"}}', NULL),
 ('zz <> :v', '{":v":{"S":"x"}}', NULL),
 ('zz < :v', '{":v":{"S":"x"}}', NULL),
 ('a BETWEEN :lo AND :hi', '{":lo":{"N":"1"},":hi":{"N":"9"}}', NULL),
 -- BETWEEN, IN
 ('n BETWEEN :lo AND :hi', '{":lo":{"N":"1"},":hi":{"N":"9"}}', NULL),
 ('n BETWEEN :lo AND :hi', '{":lo":{"N":"5"},":hi":{"N":"5"}}', NULL),
 ('a BETWEEN :lo AND :hi', '{":lo":{"S":"abd"},":hi":{"S":"b"}}', NULL),
 ('a IN (:x, :y)', '{":x":{"S":"q"},":y":{"S":"abc"}}', NULL),
 ('n IN (:x)', '{":x":{"S":"5"}}', NULL),
 ('zz IN (:x)', '{":x":{"S":"5"}}', NULL),
 -- logic and precedence: NOT > AND > OR
 ('a = :x OR a = :y AND n = :z', '{":x":{"S":"abc"},":y":{"S":"no"},":z":{"N":"0"}}', NULL),
 ('(a = :x OR a = :y) AND n = :z', '{":x":{"S":"abc"},":y":{"S":"no"},":z":{"N":"0"}}', NULL),
 ('NOT a = :x AND n = :z', '{":x":{"S":"zzz"},":z":{"N":"5"}}', NULL),
 ('NOT (a = :x AND n = :z)', '{":x":{"S":"abc"},":z":{"N":"5"}}', NULL),
 ('not a = :x or n = :z', '{":x":{"S":"abc"},":z":{"N":"5"}}', NULL),
 ('(a) = :x', '{":x":{"S":"abc"}}', NULL),
 ('(size(l)) > :x', '{":x":{"N":"2"}}', NULL),
 -- functions
 ('attribute_exists(a)', NULL, NULL),
 ('attribute_exists(zz)', NULL, NULL),
 ('attribute_not_exists(zz)', NULL, NULL),
 ('attribute_exists(l[2].k)', NULL, NULL),
 ('attribute_exists(l[3])', NULL, NULL),
 ('attribute_type(n, :t)', '{":t":{"S":"N"}}', NULL),
 ('attribute_type(ss, :t)', '{":t":{"S":"SS"}}', NULL),
 ('attribute_type(nu, :t)', '{":t":{"S":"S"}}', NULL),
 ('begins_with(a, :p)', '{":p":{"S":"ab"}}', NULL),
 ('begins_with(a, :p)', '{":p":{"S":"b"}}', NULL),
 ('begins_with(b, :p)', '{":p":{"B":"AA=="}}', NULL),
 ('begins_with(n, :p)', '{":p":{"S":"5"}}', NULL),
 ('contains(a, :p)', '{":p":{"S":"bc"}}', NULL),
 ('contains(ss, :p)', '{":p":{"S":"y"}}', NULL),
 ('contains(ns, :p)', '{":p":{"N":"2.00"}}', NULL),
 ('contains(bs, :p)', '{":p":{"B":"AA=="}}', NULL),
 ('contains(l, :p)', '{":p":{"N":"2"}}', NULL),
 ('contains(l, :p)', '{":p":{"M":{"k":{"S":"v"}}}}', NULL),
 ('contains(ss, :p)', '{":p":{"N":"1"}}', NULL),
 ('size(a) = :n', '{":n":{"N":"3"}}', NULL),
 ('size(e) = :n', '{":n":{"N":"3"}}', NULL),
 ('size(b) = :n', '{":n":{"N":"3"}}', NULL),
 ('size(l) = :n', '{":n":{"N":"3"}}', NULL),
 ('size(m) = :n', '{":n":{"N":"1"}}', NULL),
 ('size(ss) < :n', '{":n":{"N":"3"}}', NULL),
 ('size(n) = :n', '{":n":{"N":"1"}}', NULL),
 ('size(zz) <> :n', '{":n":{"N":"1"}}', NULL),
 -- nested paths and placeholders
 ('m.b.c = :one', '{":one":{"N":"1"}}', NULL),
 ('#m.#b.c = :one', '{":one":{"N":"1"}}', '{"#m":"m","#b":"b"}'),
 ('l[0] = :x', '{":x":{"S":"x"}}', NULL),
 ('l[2].k = :x', '{":x":{"S":"v"}}', NULL),
 ('a[0] = :x', '{":x":{"S":"abc"}}', NULL),
 ('#weird = :x', '{":x":{"S":"dot"}}', '{"#weird":"a.b"}'),
 ('#yr = :x', '{":x":{"S":"x"}}', '{"#yr":"year"}'),
 ('size = :x', '{":x":{"S":"x"}}', NULL);
SELECT expr, vals::text, names::text, dynindex.eval_condition(expr, :'item', names, vals) FROM c ORDER BY id;
-- the item does not exist
SELECT dynindex.eval_condition('attribute_not_exists(pk)', NULL);
SELECT dynindex.eval_condition('a <> :v', NULL, NULL, '{":v":{"S":"x"}}');
-- syntax errors
SELECT dynindex.eval_condition('', :'item');
SELECT dynindex.eval_condition('foo', :'item');
SELECT dynindex.eval_condition('a = ', :'item');
SELECT dynindex.eval_condition('attribute_not_exists(', :'item');
SELECT dynindex.eval_condition('!!', :'item');
SELECT dynindex.eval_condition('a == :v', :'item');
SELECT dynindex.eval_condition('a = :v AND', :'item');
SELECT dynindex.eval_condition('a BETWEEN :v', :'item');
SELECT dynindex.eval_condition('a IN ()', :'item');
SELECT dynindex.eval_condition('_hidden = :v', :'item');
SELECT dynindex.eval_condition('a.0 = :v', :'item');
SELECT dynindex.eval_condition('a[x] = :v', :'item');
SELECT dynindex.eval_condition('(a = :v', :'item');
SELECT dynindex.eval_condition('a = :v)', :'item');
SELECT dynindex.eval_condition('begins_with a, :v', :'item');
SELECT dynindex.eval_condition('a + :v = :v', :'item');
SELECT dynindex.eval_condition('SET = :v', :'item');
SELECT dynindex.eval_condition('((a = :v))', :'item');
SELECT dynindex.eval_condition('((a)) = :v', :'item');
-- names, functions, operands
SELECT dynindex.eval_condition('year = :v', :'item');
SELECT dynindex.eval_condition('m.Comment = :v', :'item');
SELECT dynindex.eval_condition('foo(a)', :'item');
SELECT dynindex.eval_condition('Attribute_Exists(a)', :'item');
SELECT dynindex.eval_condition('size(a)', :'item');
SELECT dynindex.eval_condition('attribute_exists(a) = :v', :'item');
SELECT dynindex.eval_condition('if_not_exists(a, :v)', :'item');
SELECT dynindex.eval_condition('attribute_exists(a, b)', :'item');
SELECT dynindex.eval_condition('begins_with(a)', :'item');
SELECT dynindex.eval_condition('attribute_exists(:v)', :'item', NULL, '{":v":{"S":"a"}}');
SELECT dynindex.eval_condition('begins_with(a, :v)', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.eval_condition('a < :v', :'item', NULL, '{":v":{"BOOL":true}}');
SELECT dynindex.eval_condition('a BETWEEN :v AND :w', :'item', NULL, '{":v":{"SS":["x"]},":w":{"SS":["y"]}}');
SELECT dynindex.eval_condition('size(a) = :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.eval_condition('size(:v) = :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.eval_condition('attribute_type(a, :v)', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.eval_condition('attribute_type(a, b)', :'item');
SELECT dynindex.eval_condition('attribute_type(a, :v)', :'item', NULL, '{":v":{"S":"STRING"}}');
-- attribute_type's first operand may be a value
SELECT dynindex.eval_condition('attribute_type(:v, :t)', :'item', NULL, '{":v":{"N":"0"},":t":{"S":"N"}}');
SELECT dynindex.eval_condition('a BETWEEN :hi AND :lo', :'item', NULL, '{":lo":{"S":"a"},":hi":{"S":"b"}}');
SELECT dynindex.eval_condition('a BETWEEN :lo AND :hi', :'item', NULL, '{":lo":{"S":"a"},":hi":{"N":"1"}}');
SELECT dynindex.eval_condition('a = a', :'item');
SELECT dynindex.eval_condition('a.b BETWEEN :x AND a.b', :'item', NULL, '{":x":{"S":"a"}}');
SELECT dynindex.eval_condition('contains(#a, a)', :'item', '{"#a":"a"}');
SELECT dynindex.eval_condition('a[99999999999] = :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.eval_condition('a[2147483648] = :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.eval_condition('a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.aa.ab.ac.ad.ae.af.ag = :v', :'item', NULL, '{":v":{"S":"x"}}');
-- IN with more than 100 operands
SELECT dynindex.eval_condition('a IN (' || string_agg(':v', ',') || ')', :'item', NULL, '{":v":{"S":"x"}}')
  FROM generate_series(1, 101);
SELECT dynindex.eval_condition('a IN (' || string_agg(':v', ',') || ')', :'item', NULL, '{":v":{"S":"abc"}}')
  FROM generate_series(1, 100);
-- operator count (300) and size (4 KB) limits
SELECT dynindex.eval_condition(string_agg('a = :v', ' OR '), :'item', NULL, '{":v":{"S":"x"}}')
  FROM generate_series(1, 150);
SELECT dynindex.eval_condition(string_agg('a = :v', ' OR '), :'item', NULL, '{":v":{"S":"x"}}')
  FROM generate_series(1, 151);
SELECT dynindex.eval_condition('a = :v OR ' || repeat(' ', 4086) || 'a', :'item', NULL, '{":v":{"S":"x"}}');
-- deep nesting is parsed, not a crash
SELECT dynindex.eval_condition(repeat('NOT ', 299) || 'a = :v', :'item', NULL, '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition(repeat('(', 1000) || 'a = :v' || repeat(')', 1000), :'item', NULL, '{":v":{"S":"abc"}}');
