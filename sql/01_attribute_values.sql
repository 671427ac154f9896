-- AttributeValue model: the ten types, canonical numbers, DynamoDB's
-- validation messages (ValidationException) and SerializationException cases.
SELECT dynindex.api('CreateTable', '{"TableName": "avtest", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- put(attribute value): store it as attribute "v" of item pk=<name>; get(name): read "v" back
CREATE OR REPLACE FUNCTION put(name text, v jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'avtest',
           'Item', jsonb_build_object('pk', jsonb_build_object('S', name), 'v', v)))
$$;
CREATE OR REPLACE FUNCTION get(name text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'avtest',
           'Key', jsonb_build_object('pk', jsonb_build_object('S', name))))->'Item'->'v'
$$;
-- roundtrip(value): PutItem, then GetItem in a later statement
CREATE OR REPLACE FUNCTION roundtrip(v jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  PERFORM put('rt', v);
  RETURN get('rt');
END $$;

-- all ten types round-trip
SELECT put('s', '{"S": "héllo ☃ 𝄞"}'), put('n', '{"N": "3.14"}'), put('b', '{"B": "AAEC/w=="}'),
       put('bool', '{"BOOL": false}'), put('null', '{"NULL": true}'),
       put('m', '{"M": {"a": {"S": "x"}, "b": {"M": {}}}}'), put('l', '{"L": [{"N": "1"}, {"S": "a"}, {"L": []}]}'),
       put('ss', '{"SS": ["b", "a"]}'), put('ns', '{"NS": ["2", "1.5"]}'), put('bs', '{"BS": ["AQ==", "AA=="]}');
SELECT n, get(n) FROM unnest(ARRAY['s', 'n', 'b', 'bool', 'null', 'm', 'l', 'ss', 'ns', 'bs']) n;

-- canonical numbers
SELECT t, roundtrip(jsonb_build_object('N', t))->>'N' AS stored
FROM unnest(ARRAY['0012.50', '-0', '0.0', '1.5E2', '1e100', '1E-130', '+5', '-1.0e-2', '.5', '5.',
                  '9.9999999999999999999999999999999999999E+125', '-9.9999999999999999999999999999999999999E+125',
                  '12345678901234567890123456789012345678', '1234567890123456789012345678901234567800000',
                  '0.' || repeat('0', 129) || '1',
                  '00000000000000000000000000000000000000000000001']) t;
SELECT roundtrip('{"NS": ["1.50", "-0", "1E2"]}');

-- number validation
SELECT put('x', '{"N": "123456789012345678901234567890123456789"}');
SELECT put('x', '{"N": "1.23456789012345678901234567890123456789"}');
SELECT put('x', '{"N": "1E126"}');
SELECT put('x', '{"N": "-1E126"}');
SELECT put('x', '{"N": "1E-131"}');
SELECT put('x', '{"N": "-0.1E-130"}');
SELECT put('x', '{"N": "abc"}');
SELECT put('x', '{"N": "1e"}');
SELECT put('x', '{"N": "0x10"}');
SELECT put('x', '{"N": " 1"}');
SELECT put('x', '{"N": "Infinity"}');
SELECT put('x', '{"N": "NaN"}');
SELECT put('x', '{"N": ""}');
SELECT put('x', '{"NS": ["1", "x"]}');
SELECT put('x', '{"L": [{"N": "1E200"}]}');

-- sets
SELECT put('x', '{"SS": []}');
SELECT put('x', '{"NS": []}');
SELECT put('x', '{"BS": []}');
SELECT put('x', '{"SS": ["a", "b", "a"]}');
SELECT put('x', '{"NS": ["1", "1.0"]}');
SELECT put('x', '{"NS": ["1", "2", "01"]}');
SELECT put('x', '{"BS": ["AA==", "AA=="]}');
SELECT put('ss_empty_member', '{"SS": [""]}') IS NOT NULL AS empty_string_in_set_ok;
SELECT put('bs_empty_member', '{"BS": [""]}') IS NOT NULL AS empty_binary_in_set_ok;

-- NULL, empty and ambiguous values
SELECT put('x', '{"NULL": false}');
SELECT put('x', '{}');
SELECT put('x', '{"S": "a", "N": "1"}');
SELECT put('x', '{"SS": ["a"], "L": []}');
SELECT put('x', '{"S": null}');
SELECT put('x', '{"X": "a"}');

-- empty strings and binaries: allowed outside keys, also inside collections
SELECT roundtrip('{"S": ""}');
SELECT roundtrip('{"B": ""}');
SELECT roundtrip('{"M": {"a": {"S": ""}, "b": {"L": [{"S": ""}]}}}');
SELECT roundtrip('{"L": [{"S": ""}, {"B": ""}]}');

-- nesting: the attribute counts as level 1; 32 levels are allowed, 33 are not
SELECT put('deep', (repeat('{"L": [', 31) || '{"S": "x"}' || repeat(']}', 31))::jsonb) IS NOT NULL AS depth_32_ok;
SELECT put('deep', (repeat('{"L": [', 32) || '{"S": "x"}' || repeat(']}', 32))::jsonb);
SELECT put('deep', (repeat('{"M": {"a": ', 32) || '{"S": "x"}' || repeat('}}', 32))::jsonb);
SELECT put('deep', (repeat('{"M": {"a": ', 31) || '{"M": {}}' || repeat('}}', 31))::jsonb) IS NOT NULL AS empty_map_at_32_ok;

-- binaries: base64 rules
SELECT put('x', '{"B": "AAE"}');
SELECT put('x', '{"B": "AB=="}');
SELECT put('x', '{"B": "A!=="}');
SELECT put('x', '{"B": 5}');
SELECT put('x', '{"BS": ["AAE"]}');

-- SerializationException: a member of the wrong JSON kind
SELECT put('x', '{"S": 5}');
SELECT put('x', '{"S": 1.5}');
SELECT put('x', '{"S": true}');
SELECT put('x', '{"S": ["a"]}');
SELECT put('x', '{"S": {"a": 1}}');
SELECT put('x', '{"N": 5}');
SELECT put('x', '{"SS": "x"}');
SELECT put('x', '{"SS": [1]}');
SELECT put('x', '{"L": {"a": 1}}');
SELECT put('x', '{"L": "x"}');
SELECT put('x', '{"M": []}');
SELECT put('x', '{"M": "x"}');
SELECT put('x', '{"BOOL": "maybe"}');
SELECT put('x', '{"BOOL": 1}');
SELECT put('x', '"just a string"');
SELECT put('x', '[{"S": "a"}]');
SELECT dynindex.api('PutItem', '{"TableName": "avtest", "Item": []}');
SELECT dynindex.api('PutItem', '{"TableName": "avtest", "Item": "x"}');

-- BOOL also accepts DynamoDB's string spellings
SELECT roundtrip('{"BOOL": "true"}');

SELECT dynindex.api('DeleteTable', '{"TableName": "avtest"}') IS NOT NULL AS deleted;
DROP FUNCTION put(text, jsonb);
DROP FUNCTION get(text);
DROP FUNCTION roundtrip(jsonb);
