-- Converters between DynamoDB's typed JSON and plain JSON (docs/converters.md)

-- typed -> plain: every type
SELECT dynindex.to_plain('{
  "s": {"S": "héllo"}, "empty": {"S": ""},
  "n": {"N": "0012.50"}, "neg": {"N": "-42"}, "big": {"N": "1E125"}, "tiny": {"N": "-1E-130"},
  "digits38": {"N": "12345678901234567890123456789012345678"},
  "b": {"B": "AAEC/w=="}, "t": {"BOOL": true}, "f": {"BOOL": false}, "nul": {"NULL": true},
  "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1.50", "-3"]}, "bs": {"BS": ["AA==", "AQ=="]},
  "l": {"L": [{"S": "x"}, {"N": "1"}, {"L": []}, {"M": {}}]},
  "m": {"M": {"inner": {"M": {"deep": {"NULL": true}}}}}
}');
-- numbers stay exact: compare as numeric
SELECT (dynindex.to_plain('{"n": {"N": "12345678901234567890123456789012345678"}}')->>'n')::numeric
       = 12345678901234567890123456789012345678 AS exact;
SELECT dynindex.to_plain('{}');
-- invalid typed input: DynamoDB's messages
SELECT dynindex.to_plain('{"a": {"N": "abc"}}');
SELECT dynindex.to_plain('{"a": {"SS": []}}');
SELECT dynindex.to_plain('{"a": {"S": 5}}');
SELECT dynindex.to_plain('{"a": {}}');
SELECT dynindex.to_plain('[1]');

-- plain -> typed: every JSON kind
SELECT dynindex.from_plain('{"s": "x", "e": "", "n": 12.50, "i": -0, "exp": 1.5e2, "t": true, "f": false,
                             "z": null, "l": [1, "a", [], {}], "m": {"k": {"k2": [null]}}}');
-- sets => false (default): arrays stay lists
SELECT dynindex.from_plain('{"tags": ["a", "b"], "nums": [1, 2]}');
-- sets => true: arrays of distinct strings -> SS, of distinct numbers -> NS,
-- anything else (empty, mixed, duplicates, 1 vs 1.0) stays L
SELECT dynindex.from_plain('{"tags": ["a", "b"], "nums": [1, 2.5], "empty": [], "mixed": ["a", 1],
                             "dups": ["a", "a"], "ndups": [1, 1.0], "nested": [["x"]]}', sets => true);
-- numbers out of DynamoDB's range
SELECT dynindex.from_plain('{"n": 1e126}');
SELECT dynindex.from_plain('{"n": 1e-131}');
SELECT dynindex.from_plain('{"n": 123456789012345678901234567890123456789}');
SELECT dynindex.from_plain('"text"');
-- nesting: 32 levels are fine, 33 are not
SELECT dynindex.from_plain(('{"a": ' || repeat('[', 32) || repeat(']', 32) || '}')::jsonb) IS NOT NULL AS depth_32_ok;
SELECT dynindex.from_plain(('{"a": ' || repeat('[', 33) || repeat(']', 33) || '}')::jsonb);

-- round trips
SELECT dynindex.to_plain(dynindex.from_plain(d)) = d AS round_trip
FROM (VALUES ('{"a": 1, "b": "x", "c": [1, [true, null]], "d": {"e": {"f": 2.5}}}'::jsonb),
             ('{"s": ["a", "b"], "n": [1, 2]}'::jsonb)) v(d);
SELECT dynindex.to_plain(dynindex.from_plain('{"s": ["b", "a"], "n": [2, 1]}', sets => true));

-- with the API
SELECT dynindex.api('CreateTable', '{"TableName": "conv", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'conv',
         'Item', dynindex.from_plain('{"pk": "u1", "name": "Ann", "age": 41, "tags": ["a", "b"]}', sets => true)));
SELECT dynindex.to_plain(dynindex.api('GetItem', '{"TableName": "conv", "Key": {"pk": {"S": "u1"}}}')->'Item');
SELECT dynindex.api('DeleteTable', '{"TableName": "conv"}') IS NOT NULL AS deleted;
