-- bench/partiql_cpu.sql (run by bench/partiql.sh): the CPU time of one backend (utime + stime
-- from /proc/self/stat, in clock ticks) for n calls of each side, alternating in rounds.
-- CPU time, unlike throughput, does not depend on what else the shared machine runs.
-- Needs a superuser (pg_read_file) and the bench_pq table of bench/partiql.sh.
CREATE OR REPLACE FUNCTION pq_cpu() RETURNS bigint LANGUAGE sql AS $$
  SELECT (f[12])::bigint + (f[13])::bigint FROM (SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') AS f) s
$$;
CREATE OR REPLACE FUNCTION pq_micro_cpu(n int, rounds int) RETURNS TABLE(op text, partiql_ticks bigint, json_ticks bigint, ratio numeric) LANGUAGE plpgsql AS $$
DECLARE t0 bigint; a bigint := 0; b bigint := 0; c bigint := 0; d bigint := 0; k int;
BEGIN
  FOR r IN 1..rounds LOOP
    t0 := pq_cpu();
    FOR i IN 1..n LOOP k := 1 + (i * 7919) % 2000;
      PERFORM dynindex.api('ExecuteStatement', jsonb_build_object('Statement', 'SELECT * FROM "bench_pq" WHERE pk = ? AND sk = ?',
        'Parameters', jsonb_build_array(jsonb_build_object('S', 'user#' || k), jsonb_build_object('N', (1 + i % 10)::text))));
    END LOOP;
    a := a + pq_cpu() - t0; t0 := pq_cpu();
    FOR i IN 1..n LOOP k := 1 + (i * 7919) % 2000;
      PERFORM dynindex.api('GetItem', jsonb_build_object('TableName', 'bench_pq',
        'Key', jsonb_build_object('pk', jsonb_build_object('S', 'user#' || k), 'sk', jsonb_build_object('N', (1 + i % 10)::text))));
    END LOOP;
    b := b + pq_cpu() - t0; t0 := pq_cpu();
    FOR i IN 1..n LOOP k := 1 + (i * 7919) % 2000;
      PERFORM dynindex.api('ExecuteStatement', jsonb_build_object('Statement', 'SELECT * FROM "bench_pq" WHERE pk = ? AND sk > ?',
        'Parameters', jsonb_build_array(jsonb_build_object('S', 'user#' || k), '{"N": "0"}'::jsonb)));
    END LOOP;
    c := c + pq_cpu() - t0; t0 := pq_cpu();
    FOR i IN 1..n LOOP k := 1 + (i * 7919) % 2000;
      PERFORM dynindex.api('Query', jsonb_build_object('TableName', 'bench_pq', 'KeyConditionExpression', 'pk = :p AND sk > :s',
        'ExpressionAttributeValues', jsonb_build_object(':p', jsonb_build_object('S', 'user#' || k), ':s', '{"N": "0"}'::jsonb)));
    END LOOP;
    d := d + pq_cpu() - t0;
  END LOOP;
  RETURN QUERY VALUES ('get', a, b, round(b::numeric / a, 2)), ('query', c, d, round(d::numeric / c, 2));
END $$;
