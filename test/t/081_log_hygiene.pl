# No item data or secrets in the server log: errors that carry items
# (ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure
# ALL_OLD from PutItem, UpdateItem and DeleteItem; TransactionCanceledException
# whose CancellationReasons carry the items) give the client the item in
# DETAIL, while the log line's DETAIL is a placeholder.  Access-key secrets
# are never logged, even with log_statement = all.  The statements that fail
# name only the key: the items' content reaches the log only if dynindex's
# errors write it there.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('log_hygiene');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nlog_statement = none\n"
	  . "log_min_messages = info\nlog_min_error_statement = error\nlog_error_verbosity = verbose\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
my $log_start = -s $node->logfile;

my $SECRET = 'CONFIDENTIAL-PAYLOAD-4f1d9c';
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Tbl","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}')});
for my $k (qw(a b c d))
{
	$node->safe_psql('postgres', qq{SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Tbl', 'Item', jsonb_build_object('pk', jsonb_build_object('S', '$k'), 'data', jsonb_build_object('S', repeat('$SECRET ', 50)))))});
}

my @failing = (
	[ 'PutItem ALL_OLD', q{SELECT dynindex.api('PutItem', '{"TableName":"Tbl","Item":{"pk":{"S":"a"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}')}, 'ConditionalCheckFailedException' ],
	[ 'UpdateItem ALL_OLD', q{SELECT dynindex.api('UpdateItem', '{"TableName":"Tbl","Key":{"pk":{"S":"b"}},"UpdateExpression":"SET x = :x","ConditionExpression":"attribute_not_exists(pk)","ExpressionAttributeValues":{":x":{"N":"1"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}')}, 'ConditionalCheckFailedException' ],
	[ 'DeleteItem ALL_OLD', q{SELECT dynindex.api('DeleteItem', '{"TableName":"Tbl","Key":{"pk":{"S":"c"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}')}, 'ConditionalCheckFailedException' ],
	[ 'TransactWriteItems reasons', q{SELECT dynindex.api('TransactWriteItems', '{"TransactItems":[{"ConditionCheck":{"TableName":"Tbl","Key":{"pk":{"S":"d"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}},{"Delete":{"TableName":"Tbl","Key":{"pk":{"S":"a"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}}]}')}, 'TransactionCanceledException' ],
);
for my $f (@failing)
{
	my ($name, $sql, $type) = @$f;
	my ($stdout, $stderr) = ('', '');
	$node->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/$type/, "$name: the client gets $type");
	like($stderr, qr/DETAIL:.*\Q$SECRET\E/s, "$name: the client gets the item in DETAIL");
}

# access keys: the secret is shown once to the caller, never logged
$node->safe_psql('postgres', q{CREATE ROLE app NOLOGIN});
my $key = $node->safe_psql('postgres', q{SET log_statement = 'all'; SELECT access_key_id || ' ' || secret_access_key FROM dynindex.create_access_key('app')});
my ($key_id, $key_secret) = split / /, $key;
ok(length($key_secret) >= 40, 'an access key was created');
$node->psql('postgres', qq{SET log_statement = 'all'; SELECT dynindex.delete_access_key('$key_id'); SELECT dynindex.create_access_key('no_such_role')});

$node->stop;
my $log = slurp_file($node->logfile, $log_start);
like($log, qr/ConditionalCheckFailedException/, 'the errors are in the server log');
like($log, qr/bytes of response members not logged/, 'with a placeholder for their items');
unlike($log, qr/\Q$SECRET\E/, 'no item content in the server log');
unlike($log, qr/\Q$key_secret\E/, 'no access-key secret in the server log');
done_testing();
