-- ImportTable, DescribeImport, ListImports (docs/import-export.md): request
-- validation and messages, the table CREATING while its import runs, item-level
-- errors counted and logged without content, duplicate keys, DYNAMODB_JSON,
-- ION and CSV from a directory store, ClientToken idempotency, paging, rights.
-- (Compressed inputs, S3 stores, crashes: TAP tests 120_import_*.)
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS imp_app, imp_reader;
CREATE ROLE imp_app NOLOGIN;
CREATE ROLE imp_reader NOLOGIN;
RESET client_min_messages;
-- masks what changes from run to run (ids, times, uuids)
CREATE FUNCTION imp_mask(t text) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(t,
    '/import/[0-9]{14}-[0-9a-f]{8}', '/import/<id>', 'g'),
    '"(StartTime|EndTime|CreationDateTime)": [0-9.]+', '"\1": "<time>"', 'g'),
    '"TableId": "[0-9a-f-]{36}"', '"TableId": "<uuid>"', 'g') $$;
CREATE FUNCTION imp_try(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN imp_mask(dynindex.api(op, req)::text);
EXCEPTION WHEN others THEN
  RETURN imp_mask(SQLERRM);
END $$;
GRANT EXECUTE ON FUNCTION imp_try(text, jsonb), imp_mask(text) TO PUBLIC;
-- an ImportTable request into table t from prefix p of bucket imp
CREATE FUNCTION imp_req(t text, p text, fmt text DEFAULT 'DYNAMODB_JSON', extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('S3BucketSource', jsonb_build_object('S3Bucket', 'imp', 'S3KeyPrefix', p),
    'InputFormat', fmt,
    'TableCreationParameters', jsonb_build_object('TableName', t, 'BillingMode', 'PAY_PER_REQUEST',
      'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
      'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                                {"AttributeName": "g", "AttributeType": "S"}]'::jsonb,
      'GlobalSecondaryIndexes', '[{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                   "Projection": {"ProjectionType": "KEYS_ONLY"}}]'::jsonb)) || extra $$;
GRANT EXECUTE ON FUNCTION imp_req(text, text, text, jsonb) TO PUBLIC;
CREATE FUNCTION imp_arn(t text) RETURNS text LANGUAGE sql AS $$
  SELECT import_arn FROM dynindex.imports WHERE table_name = t ORDER BY import_id DESC LIMIT 1 $$;
CREATE FUNCTION imp_summary(t text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s processed=%s imported=%s errors=%s bytes>0=%s failure=%s %s', status, processed_items,
         imported_items, error_count, processed_bytes > 0, failure_code, failure_message)
  FROM dynindex.import_status WHERE import_arn = imp_arn(t) $$;

-- the directory store and its files
COPY (SELECT 1) TO PROGRAM 'rm -rf exchange/imports && mkdir -p exchange/imports';
SELECT dynindex.set_object_store('imp', 'directory', directory => 'exchange/imports');
SELECT dynindex.write_object('imp', 'json/data/a.json', convert_to(
'{"Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "x"}, "n": {"N": "1.50"}}}
{"Item": {"pk": {"S": "a"}, "sk": {"N": "2"}, "g": {"S": "y"}, "ss": {"SS": ["p", "q"]}}}

{"Item": {"pk": {"S": "b"}, "sk": {"N": "1"}}}
not json at all
{"NotItem": {}}
{"Item": {"pk": {"S": "c"}}}
{"Item": {"pk": {"N": "5"}, "sk": {"N": "1"}}}
{"Item": {"pk": {"S": ""}, "sk": {"N": "1"}}}
{"Item": {"pk": {"S": "d"}, "sk": {"N": "1"}, "g": {"N": "7"}}}
{"Item": {"pk": {"S": "e"}, "sk": {"N": "1"}, "ss": {"SS": ["dup", "dup"]}}}
{"Item": {"pk": {"S": "f"}, "sk": {"N": "1"}, "x": {"N": "1e999"}}}
{"Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "z"}, "last": {"BOOL": true}}}
', 'UTF8'));
SELECT dynindex.write_object('imp', 'json/data/b.json', convert_to(
'{"Item": {"pk": {"S": "big"}, "sk": {"N": "1"}, "v": {"S": "' || repeat('x', 409600) || '"}}}
{"Item": {"pk": {"S": "ok"}, "sk": {"N": "1"}, "v": {"S": "' || repeat('x', 409000) || '"}}}
{"Item": {"pk": {"S": "a"}, "sk": {"N": "2"}, "fromb": {"BOOL": true}}}
', 'UTF8'));
-- a manifest that lies about the counts, beside the data: ImportTable does not read manifests
SELECT dynindex.write_object('imp', 'json/manifest-summary.json', convert_to('{"itemCount": 999999}', 'UTF8'));

-- ---------------------------------------------------------------- validation
SELECT imp_try('ImportTable', '{}');
SELECT imp_try('ImportTable', '{"S3BucketSource": {"S3Bucket": "imp"}, "InputFormat": "XML", "TableCreationParameters": {}}');
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/') - 'InputFormat');
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/') - 'S3BucketSource');
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/') - 'TableCreationParameters');
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'DYNAMODB_JSON', '{"InputCompressionType": "BZIP2"}'));
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'CSV', '{"InputFormatOptions": {"Csv": {"Delimiter": ",,"}}}'));
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'CSV', '{"InputFormatOptions": {"Csv": {"HeaderList": []}}}'));
-- a HeaderList name that is null (a member constraint) or no string (SerializationException)
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'CSV', '{"InputFormatOptions": {"Csv": {"HeaderList": ["pk", null]}}}'));
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'CSV', '{"InputFormatOptions": {"Csv": {"HeaderList": [1]}}}'));
SELECT imp_try('ImportTable', imp_req('Tab', 'json/data/', 'DYNAMODB_JSON', '{"S3BucketSource": {"S3KeyPrefix": "x"}}'));
SELECT imp_try('ImportTable', imp_req('x', 'json/data/'));
SELECT imp_try('ImportTable', jsonb_set(imp_req('Tab1', 'json/data/'), '{TableCreationParameters,KeySchema}', '[]'));
SELECT imp_try('ImportTable', jsonb_set(imp_req('Tab1', 'json/data/'), '{TableCreationParameters,KeySchema}',
  '[{"AttributeName": "nope", "KeyType": "HASH"}]'));
SELECT imp_try('ImportTable', jsonb_set(imp_req('Tab1', 'json/data/'), '{TableCreationParameters,BillingMode}', '"PROVISIONED"'));
SELECT imp_try('DescribeImport', '{}');
SELECT imp_try('DescribeImport', '{"ImportArn": "short"}');
SELECT imp_try('DescribeImport', '{"ImportArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Nope/import/01234567890123-abcdef12"}');
SELECT imp_try('ListImports', '{"PageSize": 0}');
SELECT imp_try('ListImports', '{"PageSize": 26}');
SELECT imp_try('ListImports', '{"NextToken": "abc"}');
SELECT imp_try('ListImports', ('{"NextToken": "' || repeat('0123456789abcdef', 7) || '"}')::jsonb);
SELECT imp_try('ListImports', '{}');
-- an existing table: ResourceInUseException, and no import is recorded
SELECT dynindex.api('CreateTable', '{"TableName": "Existing", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL;
SELECT imp_try('ImportTable', imp_req('Existing', 'json/data/'));
SELECT count(*) FROM dynindex.imports;
-- a rolled-back ImportTable starts nothing and leaves no table
BEGIN;
SELECT imp_try('ImportTable', imp_req('RolledBack', 'json/data/')) LIKE '{"ImportTableDescription"%';
ROLLBACK;
SELECT count(*) AS imports, (SELECT count(*) FROM dynindex.jobs) AS jobs FROM dynindex.imports;
SELECT imp_try('DescribeTable', '{"TableName": "RolledBack"}');

-- ---------------------------------------------------------------- DYNAMODB_JSON
SELECT imp_try('ImportTable', imp_req('Json', 'json/data/', 'DYNAMODB_JSON', '{"ClientToken": "tok-1"}'));
-- while it runs (its process starts at commit) the table is CREATING, and only DescribeTable sees it
SELECT dynindex.api('DescribeTable', '{"TableName": "Json"}')->'Table'->>'TableStatus' AS status_at_once;
SELECT dynindex.wait_for_import(imp_arn('Json'));
SELECT imp_summary('Json');
SELECT object_key, record, error_type, message FROM dynindex.import_log WHERE import_arn = imp_arn('Json') ORDER BY seq;
SELECT imp_try('DescribeImport', jsonb_build_object('ImportArn', imp_arn('Json')));
SELECT dynindex.api('DescribeTable', '{"TableName": "Json"}')->'Table'->>'TableStatus' AS status_after,
       dynindex.api('DescribeTable', '{"TableName": "Json"}')->'Table'->'GlobalSecondaryIndexes'->0->>'IndexStatus' AS gsi;
-- duplicate keys overwrite until one remains (the last read), and are no errors
SELECT imp_try('Scan', '{"TableName": "Json", "ProjectionExpression": "pk, sk, #l, fromb, ss", "ExpressionAttributeNames": {"#l": "last"}}');
SELECT imp_try('Query', '{"TableName": "Json", "IndexName": "ByG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "z"}}}');
SELECT imp_try('GetItem', '{"TableName": "Json", "Key": {"pk": {"S": "ok"}, "sk": {"N": "1"}}, "ProjectionExpression": "pk"}');
SELECT dynindex.verify_indexes('Json');
-- the INSERT path (a table with hash partitions takes no bulk load): the same items, the
-- GSI filled by INSERT ... SELECT with its btrees dropped and built again, names kept
SET dynindex.table_partitions = 2;
SELECT imp_try('ImportTable', imp_req('JsonParts', 'json/data/')) LIKE '%IN_PROGRESS%' AS started;
RESET dynindex.table_partitions;
SELECT dynindex.wait_for_import(imp_arn('JsonParts'));
SELECT imp_summary('JsonParts') = imp_summary('Json') AS same_counts;
SELECT (SELECT jsonb_agg(x ORDER BY x::text) FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "JsonParts"}')->'Items') x)
     = (SELECT jsonb_agg(x ORDER BY x::text) FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "Json"}')->'Items') x) AS same_items;
SELECT dynindex.verify_indexes('JsonParts');
SELECT string_agg(regexp_replace(i.indexrelid::regclass::text, '^dynindex_data\.t[0-9]+', 't')
                  || CASE WHEN i.indisvalid THEN '' ELSE ' (invalid)' END
                  || CASE WHEN c.contype = 'p' THEN ' (primary key)' ELSE '' END, ', ' ORDER BY i.indexrelid::regclass::text COLLATE "C") AS gsi_btrees
  FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid
 WHERE i.indrelid = ((SELECT storage FROM dynindex.tables WHERE table_name = 'JsonParts') || '_i0')::regclass;
-- the same ClientToken with the same request: the same import; with another request: ImportConflictException
SELECT imp_try('ImportTable', imp_req('Json', 'json/data/', 'DYNAMODB_JSON', '{"ClientToken": "tok-1"}')) LIKE '%"ImportStatus": "COMPLETED"%' AS same_import;
SELECT imp_try('ImportTable', imp_req('Json2', 'json/data/', 'DYNAMODB_JSON', '{"ClientToken": "tok-1"}'));

-- ---------------------------------------------------------------- ION
SELECT dynindex.write_object('imp', 'ion/data/a.ion', convert_to(
'$ion_1_0 {Item:{pk:"i1",sk:1.,"g":"x",ss:$dynamodb_SS::["a","b"],ns:$dynamodb_NS::[1.,25e-1],bs:$dynamodb_BS::[{{AQI=}}],
  b:{{aGk=}},n:12.50d1,f:false,z:null,m:{k:[1,"two",{t:true}]},esc:"a\u00e9\x41\n",long:''''''x'''''' ''''''y''''''}}
$ion_1_0 {Item:{pk:"i2",sk:2}} // a comment
{Item:{pk:"i3"}}
{Item:{pk:"i4",sk:4.,g:5}}
{Item:{pk:"i5",sk:5.,t:2024-01-01T}}
{Item:{pk:"never",sk:6.}}
', 'UTF8'));
SELECT imp_try('ImportTable', imp_req('IonT', 'ion/data/', 'ION'));
SELECT dynindex.wait_for_import(imp_arn('IonT'));
SELECT imp_summary('IonT');
SELECT object_key, record, error_type, message FROM dynindex.import_log WHERE import_arn = imp_arn('IonT') ORDER BY seq;
SELECT imp_try('Scan', '{"TableName": "IonT"}');

-- binary Ion (version marker, a local symbol table, sets, decimals, big integers, floats,
-- blobs, typed nulls, nested containers; a timestamp ends the object), and a truncated copy
SELECT dynindex.write_object('imp', 'ionbin/a.10n', decode('e00100eaeeb58183deb187beae844974656d82706b816e8c2464796e616d6f64625f53538273738162816683626967816d816c836e6567817a8174dec88adec58b8262318c53c104e28ee7818db4816181628fa2686990484004000000000000912d0c9f2c9cd04674edea40000000943105950f961192d78b85696e6e657293b481782107d68ad48b826232dd8adb8b8262338c65800fe48181d98ad78b856e65766572', 'hex'));
SELECT dynindex.write_object('imp', 'ionbint/a.10n', decode('e00100eaeeb58183deb187beae844974656d82706b816e8c2464796e616d6f64625f53538273738162816683626967816d816c836e6567817a8174dec88adec58b8262318c53c104e28ee7818db4816181628fa2686990484004000000000000912d0c9f2c9cd04674edea40000000943105950f961192d78b85696e6e657293b481782107d6', 'hex'));
CREATE FUNCTION imp_hash_req(t text, p text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_set(imp_req(t, p, 'ION'), '{TableCreationParameters,AttributeDefinitions}',
    '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}]')
    #- '{TableCreationParameters,KeySchema,1}' $$;
SELECT imp_try('ImportTable', imp_hash_req('IonB', 'ionbin/')) LIKE '%IN_PROGRESS%';
SELECT imp_try('ImportTable', imp_hash_req('IonBT', 'ionbint/')) LIKE '%IN_PROGRESS%';
SELECT dynindex.wait_for_import(imp_arn('IonB')), dynindex.wait_for_import(imp_arn('IonBT'));
SELECT imp_summary('IonB'), imp_summary('IonBT');
SELECT table_name, record, error_type, message FROM dynindex.import_log WHERE table_name IN ('IonB', 'IonBT') ORDER BY table_name, seq;
SELECT imp_try('Scan', '{"TableName": "IonB"}');

-- ---------------------------------------------------------------- CSV
SELECT dynindex.write_object('imp', 'csv/a.csv', convert_to(
E'pk,sk,g,name\nc1,1,x,Ann\n"c,2",2,,"Bob ""B"""\nc3,3,y,"two\nlines"\nc4,notanumber,x,z\nc5,5\n', 'UTF8'));
SELECT dynindex.write_object('imp', 'csvh/a.csv', convert_to(E'h1|1|q\nh2|2|r\n', 'UTF8'));
SELECT imp_try('ImportTable', imp_req('CsvT', 'csv/', 'CSV'));
SELECT imp_try('ImportTable', imp_req('CsvH', 'csvh/', 'CSV', '{"InputFormatOptions": {"Csv": {"Delimiter": "|", "HeaderList": ["pk", "sk", "g"]}}}'));
SELECT dynindex.wait_for_import(imp_arn('CsvT')), dynindex.wait_for_import(imp_arn('CsvH'));
SELECT imp_summary('CsvT'), imp_summary('CsvH');
SELECT object_key, record, error_type, message FROM dynindex.import_log WHERE import_arn = imp_arn('CsvT') ORDER BY seq;
SELECT imp_try('Scan', '{"TableName": "CsvT"}');
SELECT imp_try('Scan', '{"TableName": "CsvH"}');

-- ---------------------------------------------------------------- failures
-- no object under the prefix; a bucket no store is configured for: FAILED, and the table is gone
SELECT imp_try('ImportTable', imp_req('Empty', 'nothing-here/')) LIKE '%IN_PROGRESS%';
SELECT imp_try('ImportTable', jsonb_set(imp_req('NoBucket', 'x/'), '{S3BucketSource,S3Bucket}', '"no-such-bucket"')) LIKE '%IN_PROGRESS%';
SELECT dynindex.wait_for_import(imp_arn('Empty')), dynindex.wait_for_import(imp_arn('NoBucket'));
SELECT imp_summary('Empty'), imp_summary('NoBucket');
SELECT imp_try('DescribeTable', '{"TableName": "Empty"}');

-- ---------------------------------------------------------------- listing
-- (the token encodes the position of the last import: job ids depend on the suites run before)
SELECT regexp_replace(imp_try('ListImports', '{"PageSize": 2}'), '"NextToken": "[0-9a-f]+"', '"NextToken": "<token>"');
SELECT jsonb_array_length(dynindex.api('ListImports', jsonb_build_object('PageSize', 2,
  'NextToken', dynindex.api('ListImports', '{"PageSize": 2}')->>'NextToken'))->'ImportSummaryList');
SELECT imp_try('ListImports', jsonb_build_object('TableArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/CsvH'));

-- ---------------------------------------------------------------- rights
-- importing needs the right to create tables (docs/security.md); a directory store pg_read_server_files
SELECT imp_arn('Json') AS json_arn, imp_arn('AppTab') AS none \gset
SET ROLE imp_reader;
SELECT imp_try('ImportTable', imp_req('Denied', 'json/data/'));
SELECT imp_try('DescribeImport', jsonb_build_object('ImportArn', :'json_arn'));
SELECT imp_try('ListImports', '{}');
RESET ROLE;
GRANT dynindex_creator TO imp_app;
SET ROLE imp_app;
SELECT imp_try('ImportTable', imp_req('AppTab', 'json/data/'));
RESET ROLE;
GRANT pg_read_server_files TO imp_app;
SET ROLE imp_app;
SELECT imp_try('ImportTable', imp_req('AppTab', 'json/data/')) LIKE '%IN_PROGRESS%';
RESET ROLE;
SELECT dynindex.wait_for_import(imp_arn('AppTab'));
SELECT imp_arn('AppTab') AS app_arn \gset
SET ROLE imp_app;
SELECT imp_try('DescribeImport', jsonb_build_object('ImportArn', :'app_arn')) LIKE '%"ImportStatus": "COMPLETED"%';
SELECT imp_try('DescribeImport', jsonb_build_object('ImportArn', :'json_arn'));
SELECT jsonb_array_length(dynindex.api('ListImports', '{}')->'ImportSummaryList') AS own_imports;
SELECT imp_try('GetItem', '{"TableName": "AppTab", "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}}}');
RESET ROLE;
REVOKE pg_read_server_files FROM imp_app;
