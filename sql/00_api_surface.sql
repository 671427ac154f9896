-- The public surface of the extension: every function, table, view, sequence
-- and schema of dynindex (with privileges), its roles and its settings.  Any
-- change to them shows up here as a diff, to be reviewed as an API change
-- (docs/versions.md: an upgrade script must reach the same surface).
-- Runs first, on the extension as CREATE EXTENSION leaves it.
--
-- Stable across PostgreSQL 15-18: signatures from pg_get_function_*, privileges
-- from aclexplode (the owner's own privileges left out: they are all of them,
-- and PostgreSQL 17 added MAINTAIN to them; MAINTAIN is left out everywhere),
-- no OIDs, no owner names, every list ordered.
\pset format unaligned
\pset fieldsep ' | '

-- privileges of an object: "grantee:PRIVILEGE" (* = with grant option), owner left out
CREATE FUNCTION pg_temp.privileges(acl aclitem[], owner oid) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(string_agg(e, ', ' ORDER BY e), '-')
  FROM (SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END
               || ':' || a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END AS e
        FROM aclexplode(acl) a
        WHERE a.grantee <> owner AND a.privilege_type <> 'MAINTAIN') s
$$;

-- the extension's objects: members of the extension, or in its schemas
CREATE TEMP VIEW ext_schemas AS
  SELECT n.oid, n.nspname, n.nspacl, n.nspowner FROM pg_namespace n
  WHERE n.nspname IN ('dynindex', 'dynindex_data', 'dynindex_backups')
     OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
                WHERE x.extname = 'dynindex' AND d.deptype = 'e'
                  AND d.classid = 'pg_namespace'::regclass AND d.objid = n.oid);

SELECT extversion FROM pg_extension WHERE extname = 'dynindex';

-- schemas
SELECT nspname AS schema, pg_temp.privileges(coalesce(nspacl, acldefault('n', nspowner)), nspowner) AS privileges
FROM ext_schemas ORDER BY 1;

-- functions: signature (with defaults), result, kind, volatility, strictness,
-- parallel safety, security definer, privileges
SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_arguments(p.oid) || ')' AS function,
       pg_get_function_result(p.oid) AS result,
       CASE p.prokind WHEN 'f' THEN 'function' WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate'
                      WHEN 'w' THEN 'window' END AS kind,
       CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable' ELSE 'volatile' END AS volatility,
       CASE WHEN p.proisstrict THEN 'strict' ELSE 'called on null' END AS nulls,
       CASE p.proparallel WHEN 's' THEN 'parallel safe' WHEN 'r' THEN 'parallel restricted'
                          ELSE 'parallel unsafe' END AS parallel,
       CASE WHEN p.prosecdef THEN 'security definer' ELSE 'security invoker' END AS security,
       l.lanname AS language,
       pg_temp.privileges(coalesce(p.proacl, acldefault('f', p.proowner)), p.proowner) AS privileges
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
WHERE n.oid IN (SELECT oid FROM ext_schemas)
   OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
              WHERE x.extname = 'dynindex' AND d.deptype = 'e'
                AND d.classid = 'pg_proc'::regclass AND d.objid = p.oid)
ORDER BY n.nspname, p.proname, pg_get_function_identity_arguments(p.oid);

-- tables, views and sequences: kind, row-level security, privileges
SELECT n.nspname || '.' || c.relname AS relation,
       CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'v' THEN 'view'
                      WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence'
                      WHEN 'f' THEN 'foreign table' END AS kind,
       CASE WHEN c.relrowsecurity THEN 'row security' ELSE '-' END AS rls,
       pg_temp.privileges(coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner)),
                          c.relowner) AS privileges
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
  AND (n.oid IN (SELECT oid FROM ext_schemas)
       OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
                  WHERE x.extname = 'dynindex' AND d.deptype = 'e'
                    AND d.classid = 'pg_class'::regclass AND d.objid = c.oid))
ORDER BY 1;

-- columns of the tables and views: type, not null
SELECT n.nspname || '.' || c.relname AS relation, a.attnum AS n, a.attname AS column,
       format_type(a.atttypid, a.atttypmod) AS type, CASE WHEN a.attnotnull THEN 'not null' ELSE '-' END AS nulls
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.oid IN (SELECT oid FROM ext_schemas)
ORDER BY 1, 2;

-- roles the extension creates
SELECT rolname, rolcanlogin, rolinherit FROM pg_roles WHERE rolname LIKE 'dynindex%' ORDER BY 1;

-- settings: name, context, type, default, bounds, unit
SELECT name, context, vartype, boot_val, min_val, max_val, unit, enumvals
FROM pg_settings WHERE name LIKE 'dynindex.%' ORDER BY name;
