-- UpdateItem (expressions and legacy parameters) through dynindex.api.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"UpdT","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = if_not_exists(n, :z) + :one, tags = list_append(if_not_exists(tags, :e), :t)","ExpressionAttributeValues":{":z":{"N":"0"},":one":{"N":"1"},":e":{"L":[]},":t":{"L":[{"S":"x"}]}},"ReturnValues":"ALL_NEW"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = n + :one","ConditionExpression":"n = :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnValues":"UPDATED_OLD"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnValues":"UPDATED_NEW"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"REMOVE tags","ReturnValues":"ALL_OLD"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = n + :one","ConditionExpression":"n = :one","ExpressionAttributeValues":{":one":{"N":"1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET pk = :one","ExpressionAttributeValues":{":one":{"N":"1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET #k = :one","ExpressionAttributeNames":{"#k":"pk"},"ExpressionAttributeValues":{":one":{"N":"1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET s = :one","ExpressionAttributeValues":{":one":{"N":"1"},":two":{"N":"2"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = n + :s","ExpressionAttributeValues":{":s":{"S":"x"}}}');
SELECT dynindex.api('UpdateItem', ('{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET big = :b","ExpressionAttributeValues":{":b":{"S":"' || repeat('x', 409600) || '"}}}')::jsonb);
-- legacy
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"ADD","Value":{"N":"5"}},"l":{"Action":"ADD","Value":{"L":[{"N":"1"}]}},"n":{"Action":"DELETE"},"p":{"Value":{"S":"put"}}},"Expected":{"n":{"Value":{"N":"3"}}},"ReturnValues":"ALL_NEW"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"ADD","Value":{"N":"5"}}},"Expected":{"c":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"100"}]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"ADD"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"DELETE","Value":{"N":"5"}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"ADD","Value":{"S":"5"}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"Expected":{"c":{"ComparisonOperator":"BETWEEN","AttributeValueList":[{"N":"5"}]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"Expected":{"c":{"ComparisonOperator":"LT","AttributeValueList":[{"SS":["5"]}]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"Expected":{"c":{"Exists":false,"Value":{"N":"5"}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"Expected":{"c":{}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"c":{"Action":"ADD","Value":{"N":"5"}}},"ConditionExpression":"attribute_exists(pk)"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"ExpressionAttributeValues":{":a":{"N":"5"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}},"ExpressionAttributeNames":{"#a":"a"}}');
-- an update without changes creates the key-only item
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"b"}},"ReturnValues":"ALL_NEW"}');
SELECT dynindex.api('GetItem', '{"TableName":"UpdT","Key":{"pk":{"S":"a"}}}');
-- an update that only removes (REMOVE, DELETE from a set, AttributeUpdates DELETE) does not create an absent item
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"REMOVE x","ReturnValues":"ALL_NEW"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"DELETE s :s","ExpressionAttributeValues":{":s":{"SS":["a"]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"x":{"Action":"DELETE"},"s":{"Action":"DELETE","Value":{"SS":["a"]}}}}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"REMOVE x"}}]}');
-- (not even a nested path is checked then)
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"REMOVE x.y, z[0]"}');
SELECT dynindex.api('GetItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}}}');
-- AttributeUpdates ADD/DELETE on an attribute of another type
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"s":{"Value":{"SS":["a"]}},"n":{"Value":{"N":"1"}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"s":{"Action":"DELETE","Value":{"NS":["1"]}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"s":{"Action":"ADD","Value":{"NS":["1"]}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"n":{"Action":"ADD","Value":{"L":[{"N":"1"}]}}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"ADD s :n","ExpressionAttributeValues":{":n":{"N":"1"}}}');
-- legacy NOT_CONTAINS is false on a missing attribute (and true on a value of another type)
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"1"}}},"Expected":{"q":{"ComparisonOperator":"NOT_CONTAINS","AttributeValueList":[{"N":"1"}]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"2"}}},"Expected":{"n":{"ComparisonOperator":"NOT_CONTAINS","AttributeValueList":[{"S":"1"}]}},"ReturnValues":"UPDATED_NEW"}');
-- ConditionalOperator needs an Expected of two or more conditions (checked after mixing)
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"ConditionalOperator":"AND"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"3"}}},"Expected":{},"ConditionalOperator":"OR"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"3"}}},"Expected":{"n":{"Value":{"N":"1"}}},"ConditionalOperator":"OR"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"UpdateExpression":"SET z = :v","ExpressionAttributeValues":{":v":{"N":"3"}},"ConditionalOperator":"AND"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"3"}}},"Expected":{"n":{"Value":{"N":"1"}}},"ConditionalOperator":"AND","ConditionExpression":"attribute_exists(pk)"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"UpdT","Key":{"pk":{"S":"c"}},"AttributeUpdates":{"z":{"Value":{"N":"3"}}},"Expected":{"n":{"Value":{"N":"7"}},"q":{"Exists":false}},"ConditionalOperator":"OR","ReturnValues":"UPDATED_NEW"}');
SELECT dynindex.api('PutItem', '{"TableName":"UpdT","Item":{"pk":{"S":"d"}},"ConditionalOperator":"AND"}');
SELECT dynindex.api('PutItem', '{"TableName":"UpdT","Item":{"pk":{"S":"d"}},"Expected":{"a":{"Exists":false}},"ConditionalOperator":"AND"}');
SELECT dynindex.api('PutItem', '{"TableName":"UpdT","Item":{"pk":{"S":"d"}},"ConditionalOperator":"AND","ConditionExpression":"attribute_not_exists(pk)"}');
SELECT dynindex.api('DeleteItem', '{"TableName":"UpdT","Key":{"pk":{"S":"d"}},"ConditionalOperator":"OR"}');
SELECT dynindex.api('DeleteItem', '{"TableName":"UpdT","Key":{"pk":{"S":"d"}},"Expected":{"a":{"Exists":false}},"ConditionalOperator":"OR"}');
SELECT dynindex.api('DeleteTable', '{"TableName":"UpdT"}') IS NOT NULL;
