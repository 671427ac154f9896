-- ProjectionExpression: paths, nested maps, list indexes, DynamoDB's result shape.
\set VERBOSITY terse
\set item '{"pk":{"S":"k"},"a":{"S":"abc"},"n":{"N":"5"},"l":{"L":[{"S":"x"},{"N":"2"},{"M":{"k":{"S":"v"},"j":{"S":"w"}}}]},"m":{"M":{"b":{"M":{"c":{"N":"1"},"d":{"N":"2"}}},"e":{"S":"e"}}}}'
SELECT dynindex.project('a', :'item');
SELECT dynindex.project('a, n, zz', :'item');
SELECT dynindex.project('l[1]', :'item');
SELECT dynindex.project('l[2], l[0]', :'item');
SELECT dynindex.project('l[2].k', :'item');
SELECT dynindex.project('l[9], l[0].x, a.b', :'item');
SELECT dynindex.project('m.b.c, m.e', :'item');
SELECT dynindex.project('m.b.zz', :'item');
SELECT dynindex.project('#k, #m.#b', :'item', '{"#k":"pk","#m":"m","#b":"b"}');
SELECT dynindex.project('zz', :'item');
SELECT dynindex.project('a', NULL);
-- errors
SELECT dynindex.project('', :'item');
SELECT dynindex.project('a,', :'item');
SELECT dynindex.project('a b', :'item');
SELECT dynindex.project('size(a)', :'item');
SELECT dynindex.project(':v', :'item');
SELECT dynindex.project('!!', :'item');
SELECT dynindex.project('a, a', :'item');
SELECT dynindex.project('m, m.b', :'item');
SELECT dynindex.project('m.b.c, m.b', :'item');
SELECT dynindex.project('l[0], l.k', :'item');
SELECT dynindex.project('#k, pk', :'item', '{"#k":"pk"}');
SELECT dynindex.project('name, data', :'item');
SELECT dynindex.project('#n', :'item');
SELECT dynindex.project('a', :'item', '{"#n":"a"}');
SELECT dynindex.project(string_agg('attr' || g, ', '), :'item') IS NOT NULL FROM generate_series(1, 300) g;
SELECT dynindex.project(string_agg('attribute_' || g, ', '), :'item') FROM generate_series(1, 400) g;
