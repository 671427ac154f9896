-- One PutItem of a new item into BenchExport (pgbench script of export.sh and
-- export_writers.sh: the writers measured during an export).
\set p random(1, 10000)
\set s random(1, 100000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchExport', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'W' || :p), 'sk', jsonb_build_object('S', 'S' || :s),
  'body', jsonb_build_object('S', repeat('w', 150)))));
