-- UpdateExpression: SET (+, -, if_not_exists, list_append), REMOVE, ADD, DELETE,
-- clause and path rules, apply-time type errors (via dynindex.apply_update).
\set VERBOSITY terse
\set item '{"pk":{"S":"k"},"a":{"S":"abc"},"n":{"N":"5"},"l":{"L":[{"S":"x"},{"N":"2"},{"M":{"k":{"S":"v"}}}]},"m":{"M":{"b":{"M":{"c":{"N":"1"}}}}},"ss":{"SS":["x","y"]},"ns":{"NS":["1","2"]}}'
\set vals '{":one":{"N":"1"},":v":{"S":"new"},":l":{"L":[{"S":"q"}]},":ss":{"SS":["z","x"]},":ns":{"NS":["2","3"]},":m":{"M":{}}}'
-- SET
SELECT dynindex.apply_update('SET a = :v', :'item', NULL, '{":v":{"S":"new"}}');
SELECT dynindex.apply_update('SET n = n + :one, z = :one - n', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET m.b.d = :v, m.b.c = :v', :'item', NULL, '{":v":{"S":"new"}}');
SELECT dynindex.apply_update('SET l[0] = :v, l[7] = :w, l[5] = :v', :'item', NULL, '{":v":{"S":"new"},":w":{"S":"w"}}');
SELECT dynindex.apply_update('SET l[2].k = :v', :'item', NULL, '{":v":{"S":"new"}}');
SELECT dynindex.apply_update('SET z = if_not_exists(z, :one), n = if_not_exists(n, :one)', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET l = list_append(l, :l), k = list_append(:l, :l)', :'item', NULL, '{":l":{"L":[{"S":"q"}]}}');
SELECT dynindex.apply_update('SET #n = #n + :one', :'item', '{"#n":"n"}', '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET a = n, n = a', :'item');
SELECT dynindex.apply_update('set a = :v', NULL, NULL, '{":v":{"S":"new"}}');
-- REMOVE
SELECT dynindex.apply_update('REMOVE a, m.b.c, l[0], l[2], zz, l[9]', :'item');
-- ADD and DELETE
SELECT dynindex.apply_update('ADD n :one, ss :ss, ns :ns, cnt :one, newset :ss', :'item', NULL, '{":one":{"N":"1"},":ss":{"SS":["z","x"]},":ns":{"NS":["2","3"]}}');
SELECT dynindex.apply_update('DELETE ss :ss, ns :ns, other :ns', :'item', NULL, '{":ss":{"SS":["x","y"]},":ns":{"NS":["2"]}}');
-- several clauses
SELECT dynindex.apply_update('SET a = :v REMOVE n ADD cnt :one DELETE ss :ss', :'item', NULL, '{":v":{"S":"new"},":one":{"N":"1"},":ss":{"SS":["x"]}}');
SELECT dynindex.apply_update('REMOVE n SET a = :v', :'item', NULL, '{":v":{"S":"new"}}');
-- syntax and static checks
SELECT dynindex.apply_update('', :'item');
SELECT dynindex.apply_update('a = :v', :'item');
SELECT dynindex.apply_update('SET a = :v,', :'item', NULL, '{":v":{"S":"new"}}');
SELECT dynindex.apply_update('SET a :v', :'item', NULL, '{":v":{"S":"new"}}');
SELECT dynindex.apply_update('SET a = :v + :v + :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.apply_update('ADD a = :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.apply_update('REMOVE :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.apply_update('SET a = :v SET b = :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('REMOVE a REMOVE b', :'item');
SELECT dynindex.apply_update('ADD a :v ADD b :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.apply_update('DELETE a :v DELETE b :v', :'item', NULL, '{":v":{"SS":["1"]}}');
SELECT dynindex.apply_update('SET a = :v REMOVE a', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a = :v REMOVE a.b', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET m.b = :v, m.b.c = :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a[1] = :v REMOVE a.b', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET #a = :v, a = :v', :'item', '{"#a":"a"}', '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a = size(l)', :'item');
SELECT dynindex.apply_update('SET a = attribute_exists(l)', :'item');
SELECT dynindex.apply_update('SET a = foo(l)', :'item');
SELECT dynindex.apply_update('SET a = if_not_exists(:v, a)', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a = if_not_exists(a)', :'item');
SELECT dynindex.apply_update('SET a = list_append(l, :v)', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a = n + :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('ADD a :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('ADD a :v', :'item', NULL, '{":v":{"L":[]}}');
SELECT dynindex.apply_update('DELETE a :v', :'item', NULL, '{":v":{"N":"1"}}');
SELECT dynindex.apply_update('SET #x = :v', :'item', NULL, '{":v":{"S":"x"}}');
SELECT dynindex.apply_update('SET a = :x', :'item');
SELECT dynindex.apply_update('SET year = :v', :'item', NULL, '{":v":{"S":"x"}}');
-- apply-time errors
SELECT dynindex.apply_update('SET n = a + :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET n = zz + :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET x = zz', :'item');
SELECT dynindex.apply_update('SET q.r = :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET a.b = :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('SET m[0] = :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('REMOVE zz.y', :'item');
SELECT dynindex.apply_update('ADD a :one', :'item', NULL, '{":one":{"N":"1"}}');
SELECT dynindex.apply_update('ADD ss :ns', :'item', NULL, '{":ns":{"NS":["1"]}}');
SELECT dynindex.apply_update('DELETE ns :ss', :'item', NULL, '{":ss":{"SS":["1"]}}');
SELECT dynindex.apply_update('SET l = list_append(a, :l)', :'item', NULL, '{":l":{"L":[]}}');
-- list_append directly inside list_append is refused; if_not_exists inside list_append is fine
SELECT dynindex.apply_update('SET a = list_append(list_append(:l, :l), :l)', :'item', NULL, '{":l":{"L":[]}}');
SELECT dynindex.apply_update('SET z = list_append(if_not_exists(z, :l), :l)', :'item', NULL, '{":l":{"L":[{"S":"q"}]}}') -> 'z';
SELECT dynindex.apply_update('SET n = :big + :big', :'item', NULL, '{":big":{"N":"9.9999999999999999999999999999999999999E+125"}}');
-- a sum needing more than 38 significant digits: DynamoDB reports an overflow
SELECT dynindex.apply_update('SET n = :a - :b', :'item', NULL, '{":a":{"N":"1e50"},":b":{"N":"1"}}');
SELECT dynindex.apply_update('ADD n :a', '{"n":{"N":"0.1"}}', NULL, '{":a":{"N":"1e40"}}');
SELECT dynindex.apply_update('ADD n :big', :'item', NULL, '{":big":{"N":"-9.9999999999999999999999999999999999999E+125"}}');
SELECT dynindex.apply_update('SET n = :a - :b', :'item', NULL, '{":a":{"N":"1"},":b":{"N":"0.1"}}');
