-- Object stores (docs/import-export.md, "Object stores"): administrators map
-- bucket names to S3-compatible stores or server directories; secrets are
-- readable by nobody but the extension's owner.  (The S3 client is tested
-- against a real S3 server by the TAP tests 110_export_*.)
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS os_app, os_admin;
CREATE ROLE os_app NOLOGIN;
CREATE ROLE os_admin NOLOGIN IN ROLE dynindex_admin;
RESET client_min_messages;
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE sql INTO r;
  RETURN coalesce(r, 'ok');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.try(text) TO PUBLIC;

-- the exchange directory (dynindex.exchange_directory = 'exchange', in the data directory)
SHOW dynindex.exchange_directory;
COPY (SELECT 1) TO PROGRAM 'mkdir -p exchange/exports exchange/other && rm -rf outside && mkdir -p outside && ln -sfn ../outside exchange/link';

-- an S3 store: endpoint, credentials
SELECT dynindex.set_object_store('s3-bucket', 's3', endpoint => 'http://127.0.0.1:9/', region => 'eu-west-1',
    access_key_id => 'AKIDEXAMPLE', secret_access_key => 'wJalrXUtnFEMI/K7MDENG');
-- a directory store inside the exchange directory
SELECT dynindex.set_object_store('local-exports', 'directory', directory => 'exchange/exports');
-- replacing a store's settings
SELECT dynindex.set_object_store('s3-bucket', 's3', endpoint => 'http://127.0.0.1:9', region => 'eu-west-1',
    access_key_id => 'AKIDEXAMPLE', secret_access_key => 'wJalrXUtnFEMI/K7MDENG', remote_bucket => 'real-name');
-- the list shows no secret
SELECT * FROM dynindex.list_object_stores();

-- refused settings
SELECT pg_temp.try($$SELECT dynindex.set_object_store('bad bucket', 'directory', directory => 'exchange')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('-x', 'directory', directory => 'exchange')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'ftp')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 's3', endpoint => 'ftp://x', access_key_id => 'a', secret_access_key => 's')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 's3', endpoint => 'http://x')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 's3', endpoint => 'http://x', access_key_id => 'a:b', secret_access_key => 's')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 's3', endpoint => 'http://x', access_key_id => 'a', secret_access_key => 's', directory => '/tmp')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => 'exchange', endpoint => 'http://x')$$);
-- a directory outside the exchange directory: by path, by "..", by a symbolic link
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => '/tmp')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => 'exchange/../outside')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => 'exchange/link')$$);
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => 'exchange/missing')$$);
-- the exchange directory itself is allowed
SELECT pg_temp.try($$SELECT dynindex.set_object_store('whole', 'directory', directory => 'exchange')$$);
SELECT dynindex.drop_object_store('whole'), dynindex.drop_object_store('whole');
-- with the setting empty, no directory store may be configured
SET dynindex.exchange_directory = '';
SELECT pg_temp.try($$SELECT dynindex.set_object_store('b', 'directory', directory => 'exchange/other')$$);
RESET dynindex.exchange_directory;
-- only a superuser sets it
SET ROLE os_admin;
SELECT pg_temp.try($$SET dynindex.exchange_directory = '/'$$);

-- an account-wide administrator manages stores, and still cannot read secrets
SELECT pg_temp.try($$SELECT dynindex.set_object_store('admin-bucket', 'directory', directory => 'exchange/other')$$);
SELECT bucket, kind FROM dynindex.list_object_stores();
SELECT pg_temp.try($$SELECT secret_access_key FROM dynindex.object_stores$$);
RESET ROLE;

-- an application role: no store management, no catalog
SET ROLE os_app;
SELECT pg_temp.try($$SELECT dynindex.set_object_store('app', 'directory', directory => 'exchange/other')$$);
SELECT pg_temp.try($$SELECT count(*) FROM dynindex.list_object_stores()$$);
SELECT pg_temp.try($$SELECT dynindex.drop_object_store('s3-bucket')$$);
SELECT pg_temp.try($$SELECT secret_access_key FROM dynindex.object_stores$$);
RESET ROLE;
SELECT bucket FROM dynindex.list_object_stores();
SELECT dynindex.drop_object_store('admin-bucket');
-- a directory store: objects are files under its directory
SELECT dynindex.write_object('local-exports', 'a/b/c.txt', 'hello') IS NULL AS no_etag;
SELECT convert_from(dynindex.read_object('local-exports', 'a/b/c.txt'), 'UTF8');
SELECT pg_read_file('exchange/exports/a/b/c.txt');
SELECT dynindex.write_object('local-exports', 'a/d.txt', 'replaced') IS NULL AS no_etag;
SELECT dynindex.write_object('local-exports', 'a/d.txt', 'world') IS NULL AS no_etag;
SELECT * FROM dynindex.list_objects('local-exports', '');
SELECT * FROM dynindex.list_objects('local-exports', 'a/b');
SELECT * FROM dynindex.list_objects('local-exports', 'zz');
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'a/nothing')$$);
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'a')$$);
-- keys that would leave the directory
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', '../escape.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'a/../../escape.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', '/abs.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'a//b.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', '..')$$);
-- symbolic links planted inside the store's directory are never followed
COPY (SELECT 1) TO PROGRAM 'echo secret > outside/s.txt && ln -sfn ../../outside exchange/exports/sneaky && ln -sfn ../../outside/s.txt exchange/exports/link.txt';
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'sneaky/x.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'sneaky/s.txt')$$);
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'link.txt')$$);
SELECT * FROM dynindex.list_objects('local-exports', '');
-- writing over a link replaces the link, not the file it points to
SELECT dynindex.write_object('local-exports', 'link.txt', 'mine') IS NULL AS no_etag;
SELECT pg_read_file('outside/s.txt') AS outside_file_unchanged;
SELECT pg_temp.try($$SELECT pg_read_file('outside/x.txt')$$);
-- an administrator who is not a superuser needs pg_write_server_files /
-- pg_read_server_files for a directory store (as COPY to and from files does)
SET ROLE os_admin;
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'a/e.txt', 'x')$$);
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'a/d.txt')$$);
SELECT pg_temp.try($$SELECT count(*) FROM dynindex.list_objects('local-exports', '')$$);
RESET ROLE;
GRANT pg_read_server_files TO os_admin;
SET ROLE os_admin;
SELECT convert_from(dynindex.read_object('local-exports', 'a/d.txt'), 'UTF8');
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'a/e.txt', 'x')$$);
RESET ROLE;
GRANT pg_write_server_files TO os_admin;
SET ROLE os_admin;
SELECT pg_temp.try($$SELECT dynindex.write_object('local-exports', 'a/e.txt', 'x')$$);
RESET ROLE;
-- an application role: no objects
SET ROLE os_app;
SELECT pg_temp.try($$SELECT dynindex.read_object('local-exports', 'a/d.txt')$$);
RESET ROLE;

-- the S3 client's XML reader (responses are outside input; the fuzz suite mutates them)
SELECT dynindex._parse_s3_xml('<L><Contents><Key>a &amp; b&#233;&#x1F600;&lt;&gt;&quot;&apos;</Key></Contents><Key>2</Key></L>', 'Key');
SELECT dynindex._parse_s3_xml('<Error><Code>NoSuchBucket</Code><Message>m</Message></Error>', 'Code');
SELECT dynindex._parse_s3_xml('<Key>a &bogus; b</Key>', 'Key');
SELECT dynindex._parse_s3_xml('<Key>&#0;</Key>', 'Key');
SELECT dynindex._parse_s3_xml('<Key>&#xD800;</Key>', 'Key');
SELECT dynindex._parse_s3_xml('<Key>&#1114112;</Key>', 'Key');
SELECT dynindex._parse_s3_xml('<Key>&#x;</Key>', 'Key');
SELECT dynindex._parse_s3_xml('<Key>unterminated', 'Key');
SELECT dynindex._parse_s3_xml('<Key>a &amp', 'Key');
SELECT dynindex._parse_s3_xml('', 'Key');

-- the S3 client's SigV4 signer (s3sign.c) against the examples of S3's documentation
-- ("Signature Calculations for the Authorization Header": examplebucket, 2013-05-24)
CREATE FUNCTION pg_temp.sign(method text, path text, query text, headers text[], payload text)
RETURNS text LANGUAGE sql AS $$
  SELECT dynindex._s3_authorization(method, path, query,
    headers || ARRAY['Host: examplebucket.s3.amazonaws.com', 'x-amz-date: 20130524T000000Z',
                     'x-amz-content-sha256: ' || payload],
    payload, '20130524T000000Z', 'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'us-east-1')
$$;
-- GET Object (a range)
SELECT pg_temp.sign('GET', '/test.txt', '', ARRAY['Range: bytes=0-9'],
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
-- PUT Object (a key with '$', a Date header, a storage class)
SELECT pg_temp.sign('PUT', '/test%24file.text', '',
  ARRAY['Date: Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class: REDUCED_REDUNDANCY'],
  encode(sha256('Welcome to Amazon S3.'), 'hex'));
-- GET Bucket lifecycle (a parameter without value)
SELECT pg_temp.sign('GET', '/', 'lifecycle=', '{}',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
-- GET Bucket (List Objects)
SELECT pg_temp.sign('GET', '/', 'max-keys=2&prefix=J', '{}',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
-- header values are trimmed and their inner blanks made one; names are case-insensitive
SELECT pg_temp.sign('GET', '/test.txt', '', ARRAY['RANGE:   bytes=0-9  '],
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  = pg_temp.sign('GET', '/test.txt', '', ARRAY['Range: bytes=0-9'],
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855') AS same;
-- a '+' of a query value is %2B (a continuation token), not a space (%20)
SELECT pg_temp.sign('GET', '/', 'continuation-token=a%2Bb&list-type=2', '{}',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  <> pg_temp.sign('GET', '/', 'continuation-token=a%20b&list-type=2', '{}',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855') AS differ;
-- the client sends what it signs: a query string not in canonical form is its own bug
SELECT q, pg_temp.try(format('SELECT NULL::text FROM pg_temp.sign(''GET'', ''/'', %L, ''{}'', ''x'')', q))
FROM unnest(ARRAY['prefix=a%2Bb', 'a=1&a=2', 'a=&ab=', 'uploads=', '',
  'prefix=a+b', 'prefix=a%2fb', 'prefix=%41', 'prefix=a b', 'uploads', 'prefix=&list-type=2', '=x', 'a=b=c', 'a=1&&b=2']) q;
SELECT pg_temp.try($$SELECT pg_temp.sign('GET', 'no-slash', '', '{}', 'x')$$);
SELECT pg_temp.try($$SELECT pg_temp.sign('GET', '/', '', ARRAY['host: twice'], 'x')$$);
SELECT pg_temp.try($$SELECT pg_temp.sign('GET', '/', '', ARRAY['no colon'], 'x')$$);

-- the secret is in the table, for the owner only
SELECT bucket, secret_access_key IS NOT NULL AS has_secret FROM dynindex.object_stores ORDER BY bucket;
DROP ROLE os_app;
DROP ROLE os_admin;
