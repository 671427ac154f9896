-- Tags (TagResource, UntagResource, ListTagsOfResource, CreateTable Tags) and DescribeLimits.
SELECT dynindex.api('CreateTable', '{"TableName": "tagged", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableArn';
-- tr(tags) / ut(keys) / lt(): on table "tagged"
CREATE FUNCTION tr(tags jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('TagResource', jsonb_build_object('ResourceArn',
    'arn:aws:dynamodb:us-east-1:000000000000:table/tagged', 'Tags', tags)) $$;
CREATE FUNCTION ut(tagkeys jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('UntagResource', jsonb_build_object('ResourceArn',
    'arn:aws:dynamodb:us-east-1:000000000000:table/tagged', 'TagKeys', tagkeys)) $$;
CREATE FUNCTION lt() RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged"}') $$;
-- no tags yet
SELECT lt();
-- success: an empty response; tags listed by key; a new value replaces the old one
SELECT tr('[{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": ""}, {"Key": " ", "Value": "9"}]');
SELECT tr('[{"Key": "env", "Value": "dev"}, {"Key": "a+b-c=d.e_f:g/h@i", "Value": "a+b-c=d.e_f:g/h@i"}]');
SELECT lt();
-- letters and numbers of any script are allowed; symbols and emoji are not
SELECT tr('[{"Key": "ключ", "Value": "café 表"}]');
SELECT tr('[{"Key": "k🔑", "Value": "v"}]');
SELECT tr('[{"Key": "k", "Value": "100%"}]');
SELECT tr('[{"Key": "a,b", "Value": "v"}]');
SELECT tr('[{"Key": "k", "Value": "tab\tchar"}]');
-- lengths: Key 1..128, Value 0..256 characters
SELECT tr(jsonb_build_array(jsonb_build_object('Key', repeat('k', 128), 'Value', repeat('v', 256))));
SELECT tr(jsonb_build_array(jsonb_build_object('Key', repeat('я', 128), 'Value', 'x')));
SELECT tr(jsonb_build_array(jsonb_build_object('Key', repeat('k', 129), 'Value', 'v')));
SELECT tr(jsonb_build_array(jsonb_build_object('Key', 'k', 'Value', repeat('v', 257))));
SELECT tr('[{"Key": "", "Value": "dog"}]');
-- missing Key or Value, a null tag
SELECT tr('[{"Value": "dog"}]');
SELECT tr('[{"Key": "dog"}]');
SELECT tr('[{"Key": "dog", "Value": null}]');
SELECT tr('[{}]');
SELECT tr('[null]');
-- the aws: prefix is reserved for keys (not values)
SELECT tr('[{"Key": "ok", "Value": "v"}, {"Key": "aws:zzz", "Value": "v"}]');
SELECT tr('[{"Key": "notaws", "Value": "aws:value"}]');
-- duplicate keys in one request
SELECT tr('[{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}]');
-- nothing of a failed request was applied
SELECT jsonb_array_length(lt() -> 'Tags');
SELECT lt() -> 'Tags' @> '[{"Key": "ok"}]';
-- empty and missing lists
SELECT tr('[]');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged"}');
SELECT ut('[]');
SELECT dynindex.api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged"}');
-- wrong JSON kinds
SELECT tr('{"Key": "a"}');
SELECT tr('[{"Key": 1, "Value": "a"}]');
SELECT ut('"env"');
-- ResourceArn forms
SELECT dynindex.api('TagResource', '{"Tags": [{"Key": "a", "Value": "b"}]}');
SELECT dynindex.api('ListTagsOfResource', '{}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "tagged"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "not-an-arn", "Tags": [{"Key": "a", "Value": "b"}]}');
SELECT dynindex.api('UntagResource', '{"ResourceArn": "", "TagKeys": ["a"]}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:s3:::bucket/key"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:sqs:us-east-1:000000000000:queue"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:not/a/good/format"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-west-2:000000000000:table/tagged"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/ab"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged/index/gsi"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged/index/gsi", "Tags": [{"Key": "a", "Value": "b"}]}');
-- a missing Tags / TagKeys is a member constraint, reported before the ARN is
-- parsed; the ARN is checked before the lists, the lists before the table
SELECT dynindex.api('TagResource', '{"ResourceArn": "nope"}');
SELECT dynindex.api('TagResource', '{}');
SELECT dynindex.api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:111122223333:table/tagged"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged/index/gsi"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/missing", "Tags": []}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/missing", "Tags": [{"Key": "", "Value": ""}]}');
-- unknown table: ResourceNotFoundException naming the ARN
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/missing", "Tags": [{"Key": "a", "Value": "b"}]}');
SELECT dynindex.api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/missing", "TagKeys": ["a"]}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/missing"}');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged/stream/2024-01-01T00:00:00.000"}');
-- another account's table: "Access is denied" (before its region or name is looked at)
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:111122223333:table/tagged"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-west-2:111122223333:table/tagged", "Tags": [{"Key": "a", "Value": "b"}]}');
SELECT dynindex.api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:111122223333:table/tagged/index/gsi", "TagKeys": ["a"]}');
-- UntagResource: removing absent keys is fine; key checks; at most 50 keys
SELECT ut('["env", "non-existent", "zzz2"]');
SELECT lt();
SELECT ut('[""]');
SELECT ut(jsonb_build_array(repeat('k', 129)));
SELECT ut('["a!"]');
SELECT ut('[null]');
SELECT ut((SELECT jsonb_agg('k' || i) FROM generate_series(1, 51) i));
-- 50 tags at most, counted on the merged set
SELECT ut((SELECT jsonb_agg(t -> 'Key') FROM jsonb_array_elements(lt() -> 'Tags') t));
SELECT tr((SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 51) i));
SELECT tr((SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 49) i));
SELECT tr('[{"Key": "k1", "Value": "new"}, {"Key": "k50", "Value": "v"}]');
SELECT jsonb_array_length(lt() -> 'Tags'), lt() -> 'NextToken';
SELECT tr('[{"Key": "k51", "Value": "v"}]');
SELECT tr('[{"Key": "k1", "Value": "newer"}]');
SELECT t FROM jsonb_array_elements(lt() -> 'Tags') t WHERE t ->> 'Key' = 'k1';
-- NextToken and unknown members are accepted
SELECT jsonb_array_length(dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tagged",
  "NextToken": "x", "Other": 1}') -> 'Tags');
-- DescribeTable does not show tags
SELECT dynindex.api('DescribeTable', '{"TableName": "tagged"}') -> 'Table' ? 'Tags';
-- DeleteTable removes the tags; a new table of that name has none
SELECT dynindex.api('DeleteTable', '{"TableName": "tagged"}') -> 'TableDescription' ->> 'TableStatus';
SELECT count(*) FROM dynindex.tags WHERE table_name = 'tagged';
SELECT lt();
-- CreateTable with Tags: stored; the same checks; an empty list is fine; failures create nothing
CREATE FUNCTION ctt(name text, tags jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', jsonb_build_object('TableName', name, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb, 'Tags', tags)) -> 'TableDescription' -> 'TableStatus' $$;
SELECT ctt('tagged', '[{"Key": "str1", "Value": "str2"}, {"Key": "kkk", "Value": "vv"}]');
SELECT lt();
SELECT dynindex.api('DeleteTable', '{"TableName": "tagged"}') -> 'TableDescription' ->> 'TableStatus';
SELECT ctt('t_empty_tags', '[]');
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t_empty_tags"}');
SELECT dynindex.api('DeleteTable', '{"TableName": "t_empty_tags"}') -> 'TableDescription' ->> 'TableStatus';
SELECT ctt('t_bad_tags', '[{"Key": "aws:foo", "Value": "x"}]');
SELECT ctt('t_bad_tags', jsonb_build_array(jsonb_build_object('Key', repeat('x', 129), 'Value', 'x')));
SELECT ctt('t_bad_tags', '[{"Key": "a#b", "Value": "x"}]');
SELECT ctt('t_bad_tags', '[{"Key": "d", "Value": "1"}, {"Key": "d", "Value": "2"}]');
SELECT ctt('t_bad_tags', '[{"Key": "d"}]');
SELECT ctt('t_bad_tags', (SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 51) i));
SELECT dynindex.api('DescribeTable', '{"TableName": "t_bad_tags"}');
SELECT ctt('t_fifty', (SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 50) i));
SELECT jsonb_array_length(dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t_fifty"}') -> 'Tags');
SELECT dynindex.api('DeleteTable', '{"TableName": "t_fifty"}') -> 'TableDescription' ->> 'TableStatus';
-- a role without privileges on the tag catalog gets PostgreSQL's permission error (AccessDeniedException at the gateway)
SELECT ctt('t_priv', '[{"Key": "a", "Value": "b"}]');
CREATE ROLE tags_noaccess;
GRANT USAGE ON SCHEMA dynindex TO tags_noaccess;
GRANT SELECT ON dynindex.tables, dynindex.indexes TO tags_noaccess;
SET ROLE tags_noaccess;
\set VERBOSITY sqlstate
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t_priv"}');
SELECT dynindex.api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t_priv", "Tags": [{"Key": "c", "Value": "d"}]}');
\set VERBOSITY default
RESET ROLE;
SELECT dynindex.api('DeleteTable', '{"TableName": "t_priv"}') -> 'TableDescription' ->> 'TableStatus';
REVOKE ALL ON dynindex.tables, dynindex.indexes FROM tags_noaccess;
REVOKE ALL ON SCHEMA dynindex FROM tags_noaccess;
DROP ROLE tags_noaccess;
-- DescribeLimits: DynamoDB's default quotas; unknown members are ignored
SELECT dynindex.api('DescribeLimits', '{}');
SELECT dynindex.api('DescribeLimits', '{"Unknown": [1]}');
DROP FUNCTION tr(jsonb), ut(jsonb), lt(), ctt(text, jsonb);
