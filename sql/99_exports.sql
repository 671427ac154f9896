-- ExportTableToPointInTime, DescribeExport, ListExports (docs/import-export.md):
-- every validation rule and message, point-in-time recovery and its window,
-- the files of full and incremental exports in DynamoDB JSON and Ion (to a
-- directory store, read back through the store and gunzip), ClientToken,
-- paging, failures, and the permissions.  The S3 side: TAP 110_export_*.
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS ex_reader, ex_none, ex_files;
CREATE ROLE ex_reader NOLOGIN;
CREATE ROLE ex_none NOLOGIN;
CREATE ROLE ex_files NOLOGIN IN ROLE pg_write_server_files;
RESET client_min_messages;
CREATE SCHEMA ex97;
GRANT USAGE ON SCHEMA ex97 TO PUBLIC;
-- call(op, request): the response with ids and times masked, or the error
CREATE FUNCTION ex97.call(op text, req text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN regexp_replace(regexp_replace(regexp_replace(regexp_replace(dynindex.api(op, req::jsonb)::text,
      '[0-9]{14}-[0-9a-f]{8}', 'ID', 'g'),
      '"(StartTime|EndTime|ExportTime|ExportFromTime|ExportToTime)": [0-9.]+', '"\1": T', 'g'),
      '"TableId": "[^"]+"', '"TableId": "UUID"', 'g'),
      '"NextToken": "[0-9]+"', '"NextToken": "N"', 'g');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || regexp_replace(regexp_replace(SQLERRM, '[0-9]{10}\.[0-9]{3}', 'T', 'g'),
                                           '[0-9]{14}-[0-9a-f]{8}', 'ID', 'g');
END $$;
GRANT EXECUTE ON FUNCTION ex97.call(text, text) TO PUBLIC;
-- wait(arn): the export's status once it is no longer IN_PROGRESS
CREATE FUNCTION ex97.wait(arn text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE d jsonb;
BEGIN
  FOR i IN 1..600 LOOP
    d := dynindex.api('DescribeExport', jsonb_build_object('ExportArn', arn)) -> 'ExportDescription';
    EXIT WHEN d ->> 'ExportStatus' <> 'IN_PROGRESS';
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN d;
END $$;
-- the data files of an export (via the store), decompressed into lines
CREATE FUNCTION ex97.lines(bucket text, manifest_files text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE f jsonb; path text;
BEGIN
  FOR f IN SELECT l::jsonb FROM regexp_split_to_table(convert_from(dynindex.read_object(bucket, manifest_files), 'UTF8'), '\n') l WHERE l <> '' LOOP
    path := 'exchange/ex97/' || (f ->> 'dataFileS3Key');
    SET LOCAL client_min_messages = warning;
    CREATE TEMP TABLE IF NOT EXISTS gz_lines (line text);
    TRUNCATE gz_lines;
    EXECUTE format('COPY gz_lines FROM PROGRAM %L WITH (FORMAT csv, DELIMITER E''\x01'', QUOTE E''\x02'')', 'gzip -dc ' || path) ;
    RETURN QUERY SELECT line FROM gz_lines;
  END LOOP;
END $$;

COPY (SELECT 1) TO PROGRAM 'rm -rf exchange/ex97 && mkdir -p exchange/ex97';
SELECT dynindex.set_object_store('ex97', 'directory', directory => 'exchange/ex97');

SELECT dynindex.api('CreateTable', '{"TableName":"Exp","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', format('{"TableName":"Exp","Item":{"pk":{"S":"p%s"},"sk":{"N":"%s"},"n":{"N":"%s.5"},
  "s":{"S":"line\nwith \"quotes\" and é"},"b":{"B":"AAEC"},"t":{"BOOL":true},"z":{"NULL":true},
  "m":{"M":{"inner key":{"S":"x"},"l":{"L":[{"N":"1"},{"S":"y"}]}}},"ss":{"SS":["a","b"]},"ns":{"NS":["1","2.5"]},
  "bs":{"BS":["AQ=="]}}}', i % 3, i, i)::jsonb) IS NOT NULL FROM generate_series(1, 10) i;

-- ---- validation: members, their kinds and constraints
SELECT ex97.call('ExportTableToPointInTime', '{}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp"}');
SELECT ex97.call('ExportTableToPointInTime', '{"S3Bucket":"ex97"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportFormat":"CSV"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"PARTIAL"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3SseAlgorithm":"DES"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportTime":"yesterday"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"-bad-"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3BucketOwner":"12345"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ClientToken":"a$b"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"Exp","S3Bucket":"ex97"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Nope","S3Bucket":"ex97"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT"}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT","ExportTime":1,"IncrementalExportSpecification":{"ExportFromTime":1}}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT","IncrementalExportSpecification":{"ExportViewType":"NEW_IMAGE"}}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","IncrementalExportSpecification":{"ExportFromTime":1}}');
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT","IncrementalExportSpecification":{"ExportFromTime":1,"ExportViewType":"OLD_IMAGE"}}');
-- ---- point-in-time recovery is needed
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97"}');
SELECT dynindex.api('UpdateContinuousBackups', '{"TableName":"Exp","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}')
  #>> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription,PointInTimeRecoveryStatus}';
-- ExportTime outside the window: before PITR was enabled, in the future
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportTime":%s}',
  extract(epoch FROM now() - interval '1 hour')));
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportTime":%s}',
  extract(epoch FROM now() + interval '1 hour')));
-- the incremental window: order, at least 15 minutes, at most 24 hours, inside the recovery window
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s,"ExportToTime":%s}}', extract(epoch FROM now()), extract(epoch FROM now() - interval '1 hour')));
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s,"ExportToTime":%s}}', extract(epoch FROM now() - interval '10 minutes'), extract(epoch FROM now())));
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s,"ExportToTime":%s}}', extract(epoch FROM now() - interval '25 hours'), extract(epoch FROM now())));
SELECT ex97.call('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s}}', extract(epoch FROM now() - interval '1 hour')));

-- ---- a full export, DynamoDB JSON, as of now
CREATE TABLE ex97.ex (name text PRIMARY KEY, arn text, d jsonb);
GRANT SELECT ON ex97.ex TO PUBLIC;
SET search_path = ex97, public;
INSERT INTO ex SELECT 'full', dynindex.api('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"full"}')
  #>> '{ExportDescription,ExportArn}';
-- writes after the request are not in the export (it is the table as of ExportTime)
SELECT dynindex.api('PutItem', '{"TableName":"Exp","Item":{"pk":{"S":"late"},"sk":{"N":"1"}}}') IS NOT NULL AS late_write;
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'full';
SELECT d ->> 'ExportStatus' AS status, d ->> 'ItemCount' AS items, (d ->> 'BilledSizeBytes')::int > 0 AS billed,
       d ->> 'ExportFormat' AS format, d ->> 'ExportType' AS type, d ->> 'S3Bucket' AS bucket, d ->> 'S3Prefix' AS prefix,
       regexp_replace(d ->> 'ExportManifest', '[0-9]{14}-[0-9a-f]{8}', 'ID') AS manifest,
       d ->> 'ExportArn' ~ '^arn:aws:dynamodb:us-east-1:000000000000:table/Exp/export/[0-9]{14}-[0-9a-f]{8}$' AS arn_form,
       (d ->> 'ExportTime')::numeric <= (d ->> 'StartTime')::numeric AS time_order,
       (d ->> 'EndTime')::numeric >= (d ->> 'StartTime')::numeric AS end_after_start,
       d ? 'FailureCode' AS failed
  FROM ex WHERE name = 'full';
-- the files, DynamoDB's layout
SELECT regexp_replace(regexp_replace(key, '[0-9]{14}-[0-9a-f]{8}', 'ID'), 'data/[a-z0-9]{26}\.', 'data/NAME.') AS key
  FROM ex, dynindex.list_objects('ex97', 'full/') WHERE name = 'full' ORDER BY 1;
-- manifest-summary.json
SELECT s - 'exportArn' - 'startTime' - 'endTime' - 'tableId' - 'exportTime' - 'manifestFilesS3Key' - 'billedSizeBytes' AS summary,
       s ->> 'exportArn' = ex.arn AS arn, s ->> 'tableId' = (dynindex.api('DescribeTable', '{"TableName":"Exp"}') #>> '{Table,TableId}') AS table_id,
       s ->> 'exportTime' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$' AS iso_time,
       s ->> 'manifestFilesS3Key' = regexp_replace(d ->> 'ExportManifest', 'summary', 'files') AS files_key
  FROM ex, LATERAL (SELECT convert_from(dynindex.read_object('ex97', d ->> 'ExportManifest'), 'UTF8')::jsonb AS s) m
 WHERE name = 'full';
-- the checksums are the manifests' MD5
SELECT convert_from(dynindex.read_object('ex97', regexp_replace(d ->> 'ExportManifest', 'json$', 'checksum')), 'UTF8')
         = md5(dynindex.read_object('ex97', d ->> 'ExportManifest')) AS summary_checksum,
       convert_from(dynindex.read_object('ex97', regexp_replace(d ->> 'ExportManifest', 'summary\.json$', 'files.checksum')), 'UTF8')
         = md5(dynindex.read_object('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files'))) AS files_checksum
  FROM ex WHERE name = 'full';
-- manifest-files.json: one line per data file; itemCount, md5Checksum (base64), etag (hex MD5)
SELECT (f ->> 'itemCount')::int AS items,
       f ->> 'md5Checksum' = encode(decode(md5(dynindex.read_object('ex97', f ->> 'dataFileS3Key')), 'hex'), 'base64') AS md5,
       f ->> 'etag' = md5(dynindex.read_object('ex97', f ->> 'dataFileS3Key')) AS etag
  FROM ex, LATERAL regexp_split_to_table(convert_from(dynindex.read_object('ex97',
         regexp_replace(d ->> 'ExportManifest', 'summary', 'files')), 'UTF8'), '\n') l, LATERAL (SELECT l::jsonb AS f) x
 WHERE name = 'full' AND l <> '';
-- the data: {"Item": ...} per line, the items exactly, without the late write
SELECT count(*) AS lines, count(*) FILTER (WHERE l::jsonb ? 'Item') AS item_lines
  FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l WHERE name = 'full';
SELECT (SELECT array_agg(l::jsonb -> 'Item' ORDER BY l::jsonb -> 'Item') FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l WHERE name = 'full')
     = (SELECT array_agg(i ORDER BY i) FROM dynindex.scan('Exp') i WHERE i #>> '{pk,S}' <> 'late') AS same_items;

-- ---- an export as of a past time: the items as they were then
SELECT pg_sleep(0.01);
CREATE TABLE ex97.t1 AS SELECT clock_timestamp() AS t;
SELECT pg_sleep(0.01);
SELECT dynindex.api('UpdateItem', '{"TableName":"Exp","Key":{"pk":{"S":"p1"},"sk":{"N":"1"}},"UpdateExpression":"SET s = :v","ExpressionAttributeValues":{":v":{"S":"changed"}}}') IS NOT NULL;
SELECT dynindex.api('DeleteItem', '{"TableName":"Exp","Key":{"pk":{"S":"p2"},"sk":{"N":"2"}}}') IS NOT NULL;
INSERT INTO ex SELECT 'past', dynindex.api('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"past/","ExportTime":%s}',
  extract(epoch FROM t))::jsonb) #>> '{ExportDescription,ExportArn}' FROM t1;
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'past';
SELECT d ->> 'ExportStatus' AS status, d ->> 'ItemCount' AS items FROM ex WHERE name = 'past';
SELECT l::jsonb #>> '{Item,s,S}' AS s_of_p1 FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l
 WHERE name = 'past' AND l::jsonb #>> '{Item,pk,S}' = 'p1' AND l::jsonb #>> '{Item,sk,N}' = '1';
SELECT count(*) AS deleted_item_still_there FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l
 WHERE name = 'past' AND l::jsonb #>> '{Item,pk,S}' = 'p2' AND l::jsonb #>> '{Item,sk,N}' = '2';
SELECT count(*) AS late_write_absent FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l
 WHERE name = 'past' AND l::jsonb #>> '{Item,pk,S}' = 'late';

-- ---- Ion
INSERT INTO ex SELECT 'ion', dynindex.api('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"ion","ExportFormat":"ION"}')
  #>> '{ExportDescription,ExportArn}';
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'ion';
SELECT d ->> 'ExportStatus' AS status, d ->> 'ItemCount' AS items, d ->> 'ExportFormat' AS format FROM ex WHERE name = 'ion';
SELECT regexp_replace(l, '^\$ion_1_0 ', '') AS line FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l
 WHERE name = 'ion' AND (l LIKE '%"p0"%sk:3d0%' OR l LIKE '%"late"%') ORDER BY 1;
-- the file starts with the version marker; one item per line
SELECT count(*) FILTER (WHERE l LIKE '$ion_1_0 {Item:{%}}') AS marked, count(*) FILTER (WHERE l LIKE '{Item:{%}}') AS items, count(*) AS lines
  FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l WHERE name = 'ion';

-- ---- round trip: the data files of both exports import unchanged (ImportTable of their data/ prefix)
INSERT INTO ex SELECT 'back_' || name, dynindex.api('ImportTable', format('{"S3BucketSource":{"S3Bucket":"ex97","S3KeyPrefix":"%s"},
  "InputFormat":"%s","InputCompressionType":"GZIP","TableCreationParameters":{"TableName":"Back_%s","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}}',
  regexp_replace(d ->> 'ExportManifest', 'manifest-summary\.json$', 'data/'), d ->> 'ExportFormat', name)::jsonb) #>> '{ImportTableDescription,ImportArn}'
  FROM ex WHERE name IN ('full', 'ion');
SELECT name, dynindex.wait_for_import(arn) AS import FROM ex WHERE name LIKE 'back_%' ORDER BY 1;
-- the DynamoDB JSON export's table: exactly the items of its files; the Ion one's: the table now (no write since)
SELECT (SELECT array_agg(l::jsonb -> 'Item' ORDER BY l::jsonb -> 'Item') FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l
         WHERE name = 'full' AND l <> '')
     = (SELECT array_agg(i ORDER BY i) FROM dynindex.scan('Back_full') i) AS json_round_trip,
       (SELECT array_agg(i ORDER BY i) FROM dynindex.scan('Exp') i)
     = (SELECT array_agg(i ORDER BY i) FROM dynindex.scan('Back_ion') i) AS ion_round_trip,
       (SELECT count(*) FROM dynindex.scan('Back_ion')) AS items;
SELECT dynindex.api('DeleteTable', '{"TableName":"Back_full"}') IS NOT NULL AS dropped, dynindex.api('DeleteTable', '{"TableName":"Back_ion"}') IS NOT NULL AS dropped;

-- ---- incremental: the keys changed in a window (PITR enabled an hour "ago" for the window rules)
UPDATE dynindex.pitr SET enabled_at = enabled_at - interval '1 hour' WHERE table_name = 'Exp';
-- (a new session: the catalog cache of this one holds the old window)
\c -
\set VERBOSITY terse
SET search_path = ex97, public;
SELECT dynindex.api('PutItem', '{"TableName":"Exp","Item":{"pk":{"S":"inc"},"sk":{"N":"1"},"v":{"S":"new"}}}') IS NOT NULL;
SELECT dynindex.api('UpdateItem', '{"TableName":"Exp","Key":{"pk":{"S":"p0"},"sk":{"N":"3"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":"upd"}}}') IS NOT NULL;
SELECT dynindex.api('DeleteItem', '{"TableName":"Exp","Key":{"pk":{"S":"p0"},"sk":{"N":"6"}}}') IS NOT NULL;
INSERT INTO ex SELECT 'inc', dynindex.api('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"inc","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s}}', extract(epoch FROM t - interval '20 minutes'))::jsonb) #>> '{ExportDescription,ExportArn}' FROM t1;
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'inc';
SELECT d ->> 'ExportStatus' AS status, d ->> 'ItemCount' AS items, d ->> 'ExportType' AS type,
       d #>> '{IncrementalExportSpecification,ExportViewType}' AS view FROM ex WHERE name = 'inc';
SELECT l::jsonb -> 'Keys' AS keys, l::jsonb ? 'OldImage' AS has_old, l::jsonb ? 'NewImage' AS has_new,
       l::jsonb #>> '{NewImage,v,S}' AS new_v, l::jsonb #>> '{OldImage,s,S}' AS old_s,
       (l::jsonb #>> '{Metadata,WriteTimestampMicros,N}')::numeric > 0 AS stamped
  FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l WHERE name = 'inc'
 ORDER BY l::jsonb -> 'Keys';
SELECT regexp_replace(key, '[0-9]{14}-[0-9a-f]{8}', 'ID') ~ '^inc/AWSDynamoDB/(ID/(_started|manifest-(files|summary)\.(json|checksum))|data/[a-z0-9]{26}\.json\.gz)$' AS layout, count(*)
  FROM dynindex.list_objects('ex97', 'inc/') GROUP BY 1;
SELECT s ->> 'exportType' AS type, s ->> 'outputView' AS view, s ? 'exportFromTime' AND s ? 'exportToTime' AS window
  FROM ex, LATERAL (SELECT convert_from(dynindex.read_object('ex97', d ->> 'ExportManifest'), 'UTF8')::jsonb AS s) m WHERE name = 'inc';
-- NEW_IMAGE: no old images
INSERT INTO ex SELECT 'inc_new', dynindex.api('ExportTableToPointInTime', format('{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"incnew","ExportType":"INCREMENTAL_EXPORT",
  "IncrementalExportSpecification":{"ExportFromTime":%s,"ExportViewType":"NEW_IMAGE"}}', extract(epoch FROM t - interval '20 minutes'))::jsonb) #>> '{ExportDescription,ExportArn}' FROM t1;
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'inc_new';
SELECT count(*) AS lines, count(*) FILTER (WHERE l::jsonb ? 'OldImage') AS old_images
  FROM ex, ex97.lines('ex97', regexp_replace(d ->> 'ExportManifest', 'summary', 'files')) l WHERE name = 'inc_new';

-- ---- ClientToken
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"tok","ClientToken":"tok-1"}') ~ 'IN_PROGRESS' AS first;
SELECT (SELECT count(*) FROM dynindex.exports WHERE client_token = 'tok-1') AS exports,
       dynindex.api('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"tok","ClientToken":"tok-1"}') #>> '{ExportDescription,ExportArn}'
       = (SELECT export_arn FROM dynindex.exports WHERE client_token = 'tok-1') AS same_export,
       (SELECT count(*) FROM dynindex.exports WHERE client_token = 'tok-1') AS still;
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"other","ClientToken":"tok-1"}');

-- ---- a bucket no store is configured for: the export fails as DynamoDB's does
INSERT INTO ex SELECT 'nobucket', dynindex.api('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"no-such-bucket"}')
  #>> '{ExportDescription,ExportArn}';
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'nobucket';
SELECT d ->> 'ExportStatus' AS status, d ->> 'FailureCode' AS code, d ->> 'FailureMessage' AS message, d ? 'EndTime' AS ended
  FROM ex WHERE name = 'nobucket';

-- ---- S3SseAlgorithm on a server directory: it cannot encrypt, so the export fails (never unencrypted files)
INSERT INTO ex SELECT 'sse', dynindex.api('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"sse","S3SseAlgorithm":"KMS","S3SseKmsKeyId":"k1"}')
  #>> '{ExportDescription,ExportArn}';
UPDATE ex SET d = ex97.wait(arn) WHERE name = 'sse';
SELECT d ->> 'ExportStatus' AS status, d ->> 'FailureCode' AS code, d ->> 'FailureMessage' AS message
  FROM ex WHERE name = 'sse';

-- ---- DescribeExport
SELECT ex97.call('DescribeExport', '{}');
SELECT ex97.call('DescribeExport', '{"ExportArn":"short"}');
SELECT ex97.call('DescribeExport', '{"ExportArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp/export/01234567890123-abcdef01"}');
SELECT ex97.call('DescribeExport', format('{"ExportArn":"%s"}', arn)) FROM ex WHERE name = 'nobucket';

-- ---- ListExports: paging, a table's exports
SELECT ex97.call('ListExports', '{"MaxResults":0}');
SELECT ex97.call('ListExports', '{"MaxResults":26}');
SELECT ex97.call('ListExports', '{"NextToken":"garbage"}');
SELECT jsonb_array_length(dynindex.api('ListExports', '{}') -> 'ExportSummaries') AS all_exports;
SELECT ex97.call('ListExports', '{"MaxResults":2}');
SELECT ex97.call('ListExports', format('{"MaxResults":2,"NextToken":"%s"}', dynindex.api('ListExports', '{"MaxResults":2}') ->> 'NextToken'));
SELECT jsonb_array_length(dynindex.api('ListExports', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp"}') -> 'ExportSummaries') AS of_ex,
       jsonb_array_length(dynindex.api('ListExports', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Other"}') -> 'ExportSummaries') AS of_other;
-- the SQL function and the progress view
SELECT dynindex.export_table('Exp', 'ex97', 'sqlfn') ~ '/export/' AS started;
SELECT ex97.wait(export_arn) ->> 'ExportStatus' AS status FROM dynindex.exports WHERE s3_prefix = 'sqlfn';
SELECT status, items, s3_prefix, export_format FROM dynindex.export_status WHERE s3_prefix = 'sqlfn';

-- ---- permissions
SELECT dynindex.grant_table('Exp', 'ex_reader', 'read');
SELECT dynindex.grant_table('Exp', 'ex_files', 'read');
SET ROLE ex_none;
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97"}');
SELECT ex97.call('DescribeExport', format('{"ExportArn":"%s"}', (SELECT arn FROM ex WHERE name = 'full')));
SELECT ex97.call('ListExports', '{}');
SELECT ex97.call('ListExports', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp"}');
RESET ROLE;
-- the read right, but a directory store needs pg_write_server_files
SET ROLE ex_reader;
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97"}');
SELECT ex97.call('DescribeExport', format('{"ExportArn":"%s"}', (SELECT arn FROM ex WHERE name = 'full'))) ~ 'COMPLETED' AS describes;
SELECT jsonb_array_length(dynindex.api('ListExports', '{}') -> 'ExportSummaries') > 0 AS lists;
RESET ROLE;
SET ROLE ex_files;
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"byrole"}') ~ 'IN_PROGRESS' AS exports;
SELECT ex97.call('ExportTableToPointInTime', '{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/Exp","S3Bucket":"ex97","S3Prefix":"owner","S3BucketOwner":"111122223333"}') ~ 'IN_PROGRESS' AS accepted;
RESET ROLE;
-- a bucket of another owner: the export fails S3AccessDenied
SELECT d ->> 'ExportStatus' AS status, d ->> 'FailureCode' AS code, d ->> 'FailureMessage' AS message
  FROM (SELECT ex97.wait(export_arn) AS d FROM dynindex.exports WHERE s3_prefix = 'owner') x;
SELECT ex97.wait(export_arn) ->> 'ExportStatus' AS byrole FROM dynindex.exports WHERE s3_prefix = 'byrole';

DROP SCHEMA ex97 CASCADE;
SELECT dynindex.revoke_table('Exp', 'ex_reader'), dynindex.revoke_table('Exp', 'ex_files');
SELECT dynindex.api('DeleteTable', '{"TableName":"Exp"}') IS NOT NULL AS deleted;
SELECT dynindex.drop_object_store('ex97');
DROP ROLE ex_reader;
DROP ROLE ex_none;
DROP ROLE ex_files;
