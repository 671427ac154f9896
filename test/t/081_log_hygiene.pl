# No item data or secrets in the server log, and no client errors in it.
#
# 1. With dynindex.log_client_errors on: errors that carry items
# (ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure
# ALL_OLD from PutItem, UpdateItem and DeleteItem; TransactionCanceledException
# whose CancellationReasons carry the items) give the client the item in
# DETAIL, while the log line's DETAIL is a placeholder.  Access-key secrets
# are never logged, even with log_statement = all.  The statements that fail
# name only the key: the items' content reaches the log only if dynindex's
# errors write it there.  A request body that is not JSON for jsonb (a lone
# surrogate escape, "\ud800") fails without quoting the body (no "Token ...
# is invalid" DETAIL, no "JSON data, line 1: ..." CONTEXT).
#
# 2. By default (issue #23 item 9): DynamoDB client errors (HTTP 4xx:
# ConditionalCheckFailedException, ValidationException,
# ResourceNotFoundException, SerializationException) through the gateway,
# dynindex_http and SQL write no line to the server log, and the endpoints
# log none either; a server-side failure (a PostgreSQL error, XX000) is
# still logged on every path.  Counts of log lines and answers only.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use HTTP::Tiny;
use JSON::PP;
use MIME::Base64;

my $node = PostgreSQL::Test::Cluster->new('log_hygiene');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
my $http_port = PostgreSQL::Test::Cluster::get_free_port();
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex,dynindex_http'\nlog_statement = none\n"
	  . "log_min_messages = info\nlog_min_error_statement = error\nlog_error_verbosity = verbose\n"
	  . "dynindex_http.port = $http_port\ndynindex_http.dev = on\ndynindex_http.workers = 1\n");
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
	$node->psql('postgres', "SET dynindex.log_client_errors = on; $sql", stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/$type/, "$name: the client gets $type");
	like($stderr, qr/DETAIL:.*\Q$SECRET\E/s, "$name: the client gets the item in DETAIL");
}

# access keys: the secret is shown once to the caller, never logged
$node->safe_psql('postgres', q{CREATE ROLE app NOLOGIN});
my $key = $node->safe_psql('postgres', q{SET log_statement = 'all'; SELECT access_key_id || ' ' || secret_access_key FROM dynindex.create_access_key('app')});
my ($key_id, $key_secret) = split / /, $key;
ok(length($key_secret) >= 40, 'an access key was created');
$node->psql('postgres', qq{SET log_statement = 'all'; SELECT dynindex.delete_access_key('$key_id'); SELECT dynindex.create_access_key('no_such_role')});

# A body jsonb cannot hold (a lone surrogate): the error is logged, the body is not.
# The statement names the body in base64 only, so only the error could log it.
my $bad_body = qq({"TableName":"Tbl","Item":{"pk":{"S":"$SECRET \\ud800"},"data":{"S":"$SECRET"}}});
my $b64 = encode_base64($bad_body, '');
{
	my ($stdout, $stderr) = ('', '');
	$node->psql('postgres', "SET dynindex.log_client_errors = on; SELECT dynindex.api_text('PutItem', convert_from(decode('$b64', 'base64'), 'UTF8'))",
		stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/invalid input syntax for type json/, 'lone surrogate: the SQL caller gets the JSON error');
	like($stderr, qr/dynindex request body/, '  ... in the request body\'s context');
	unlike($stderr, qr/\Q$SECRET\E/, '  ... without the body\'s text');
}

my $log = slurp_file($node->logfile, $log_start);
like($log, qr/ConditionalCheckFailedException/, 'the errors are in the server log');
like($log, qr/bytes of response members not logged/, 'with a placeholder for their items');
like($log, qr/invalid input syntax for type json/, 'the JSON error is in the server log');
unlike($log, qr/\Q$SECRET\E/, 'no item content in the server log');
unlike($log, qr/\Q$key_secret\E/, 'no access-key secret in the server log');

# 2. Client errors by default: through the gateway, dynindex_http and SQL.
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Boom","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}')});
# a server-side failure: a trigger on Boom's storage raises XX000 on every write
$node->safe_psql('postgres', q{
CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'server-side failure 7e3b' USING ERRCODE = 'XX000'; END $$;
DO $$ BEGIN EXECUTE format('CREATE TRIGGER boom BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION boom()',
  (SELECT COALESCE(to_regclass(quote_ident('dynindex_data') || '.' || quote_ident(storage)), to_regclass(storage))
     FROM dynindex.tables WHERE table_name = 'Boom')); END $$;
});
my ($out, $err) = ('', '');
my ($gw, $gw_port) = start_gateway(\$out, \$err, '--dev', '--pool-size', '2', '--dbname', $node->connstr('postgres'));
END { local $?; $gw->kill_kill if $gw && $gw->pumpable; }
ok($gw_port, 'the gateway started') or BAIL_OUT("gateway did not start: $out $err");
my $deadline = time + 60;
sleep 1 while time < $deadline && (HTTP::Tiny->new(timeout => 2)->get("http://127.0.0.1:$http_port/")->{status} // 0) != 200;

my $mark = -s $node->logfile;
my @client = (
	[ 'PutItem', encode_json({ TableName => 'Tbl', Item => { pk => { S => 'a' } }, ConditionExpression => 'attribute_not_exists(pk)' }), 'ConditionalCheckFailedException' ],
	[ 'PutItem', encode_json({ TableName => 'Tbl' }), 'ValidationException' ],
	[ 'GetItem', encode_json({ TableName => 'Missing', Key => { pk => { S => 'a' } } }), 'ResourceNotFoundException' ],
	[ 'PutItem', $bad_body, 'SerializationException' ],
);
my %answers;
for my $ep ([ gateway => $gw_port ], [ dynindex_http => $http_port ])
{
	my ($name, $port) = @$ep;
	my $http = HTTP::Tiny->new(timeout => 30);
	for my $c (@client)
	{
		my ($op, $body, $type) = @$c;
		for (1 .. 5)
		{
			my $r = $http->post("http://127.0.0.1:$port/", {
				headers => { 'Content-Type' => 'application/x-amz-json-1.0', 'X-Amz-Target' => "DynamoDB_20120810.$op" },
				content => $body });
			my $j = eval { decode_json($r->{content}) } // {};
			$answers{"$name $type"}++ if $r->{status} == 400 && ($j->{__type} // '') =~ /#\Q$type\E$/;
		}
	}
	my $r = $http->post("http://127.0.0.1:$port/", {
		headers => { 'Content-Type' => 'application/x-amz-json-1.0', 'X-Amz-Target' => 'DynamoDB_20120810.PutItem' },
		content => encode_json({ TableName => 'Boom', Item => { pk => { S => 'x' } } }) });
	is($r->{status}, 500, "$name: a server-side failure is InternalServerError");
}
is($answers{"$_->[0] $_->[1]"} // 0, 5, "$_->[0]: 5 answers $_->[1]")
  for map { my $ep = $_; map { [ $ep, $_->[2] ] } @client } qw(gateway dynindex_http);
for my $c (@client)
{
	my ($stdout, $stderr) = ('', '');
	my $b = encode_base64($c->[1], '');
	$node->psql('postgres', "SELECT dynindex.api_text('$c->[0]', convert_from(decode('$b', 'base64'), 'UTF8'))",
		stdout => \$stdout, stderr => \$stderr);
	like($stderr, $c->[2] eq 'SerializationException' ? qr/invalid input syntax for type json/ : qr/\Q$c->[2]\E/,
		"SQL: the caller gets $c->[2]");
}
$node->psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Boom","Item":{"pk":{"S":"y"}}}')});

$gw->signal('TERM');
$gw->finish;
$node->stop;
$log = slurp_file($node->logfile, $mark);
my @client_lines = grep { /Exception|invalid input syntax for type json|dynindex request body/ } split /\n/, $log;
is(scalar(@client_lines), 0, 'no client error in the server log by default')
  or diag(join("\n", @client_lines[0 .. ($#client_lines < 9 ? $#client_lines : 9)]));
my $gw_lines = () = $err =~ /Exception|internal error/g;
is($gw_lines, 1, 'the gateway logged the server-side failure only') or diag($err);
my $sql_errors = () = $log =~ /ERROR:\s+XX000: server-side failure 7e3b/g;
is($sql_errors, 2, 'the server-side failures through the gateway and SQL are logged as ERRORs');
my $http_errors = () = $log =~ /dynindex_http: internal error from dynindex\.api: server-side failure 7e3b/g;
is($http_errors, 1, 'the one through dynindex_http is logged by its worker');
unlike($log . $err . $out, qr/\Q$SECRET\E/, 'no item content in any log');
done_testing();
