-- ExpressionAttributeNames / ExpressionAttributeValues rules.
\set VERBOSITY terse
\set item '{"a":{"S":"abc"}}'
SELECT dynindex.eval_condition('#a = :v', :'item', '{"#a":"a"}', '{":v":{"S":"abc"}}');
-- undefined
SELECT dynindex.eval_condition('#b = :v', :'item', '{"#a":"a"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('#a = :w', :'item', '{"#a":"a"}', '{":v":{"S":"abc"}}');
-- unused (listed in Java HashSet order, as DynamoDB does)
SELECT dynindex.eval_condition('a = :v', :'item', '{"#a":"a","#b":"b"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', '{"#zeta":"z","#alpha":"a","#b1":"b","#B2":"c"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('#a = :v', :'item', '{"#a":"a"}', '{":v":{"S":"abc"},":w":{"N":"1"},":x":{"N":"2"}}');
-- empty maps, invalid keys and values
SELECT dynindex.eval_condition('a = :v', :'item', '{}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{}');
SELECT dynindex.eval_condition('a = :v', :'item', '{"a":"a"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', '{"#a-b":"a"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', '{"#":"a"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('#a = :v', :'item', '{"#a":""}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{"v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{":v":{}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{":v":{"N":"abc"}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{":v":{"SS":[]}}');
SELECT dynindex.eval_condition('a = :v', :'item', NULL, '{":v":{"S":"a","N":"1"}}');
SELECT dynindex.eval_condition('a = :v', :'item', ('{"#' || repeat('x', 255) || '":"a"}')::jsonb, '{":v":{"S":"abc"}}');
-- reserved words: bare names rejected, placeholders fine, keywords are syntax errors
SELECT dynindex.eval_condition('status = :v', :'item', NULL, '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('#s = :v', :'item', '{"#s":"status"}', '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('a.Name = :v', :'item', NULL, '{":v":{"S":"abc"}}');
SELECT dynindex.eval_condition('between = :v', :'item', NULL, '{":v":{"S":"abc"}}');
SELECT word, dynindex.eval_condition(word || ' = :v', :'item', NULL, '{":v":{"S":"abc"}}')
  FROM unnest(ARRAY['size', 'convert', 'names2', 'x_y', 'A1']) AS word;
SELECT dynindex.eval_condition(word || ' = :v', :'item', NULL, '{":v":{"S":"abc"}}')
  FROM unnest(ARRAY['zone']) AS word;
-- a placeholder standing for a name with dots is one attribute
SELECT dynindex.eval_condition('#d = :v', '{"a.b":{"S":"x"}}', '{"#d":"a.b"}', '{":v":{"S":"x"}}');
