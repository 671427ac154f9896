# dynindex_http: DynamoDB's HTTP endpoint served by background workers inside
# PostgreSQL.  The workers start with the server and answer the gateway's wire
# protocol; each request is its own transaction (a cancelled transaction
# leaves nothing behind); a request that waits longer than
# dynindex_http.request_timeout gets HTTP 500 and the worker goes on serving;
# a terminated worker comes back; kill -9 of a worker restarts the server
# and the endpoint with it, committed items intact; when the postmaster dies
# the workers exit and free the port; a fast shutdown stops them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use Time::HiRes qw(time usleep);

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $node = PostgreSQL::Test::Cluster->new('http_worker');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'dynindex,dynindex_http'
dynindex_http.port = $port
dynindex_http.dev = on
dynindex_http.workers = 2
dynindex_http.request_timeout = 2
restart_after_crash = on
EOC
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my $url = "http://127.0.0.1:$port/";

sub call
{
	my ($op, $body, $http) = @_;
	$http //= HTTP::Tiny->new(timeout => 30);
	my $r = $http->post($url, {
		headers => {
			'Content-Type' => 'application/x-amz-json-1.0',
			'X-Amz-Target' => "DynamoDB_20120810.$op",
		},
		content => ref $body ? encode_json($body) : $body,
	});
	my $json = eval { decode_json($r->{content}) } // {};
	return ($r->{status}, $json, $r);
}

# The endpoint answers its health check (within seconds: the workers start after recovery).
sub wait_healthy
{
	my ($seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		my $r = HTTP::Tiny->new(timeout => 2)->get($url);
		return 1 if $r->{status} == 200;
		usleep(100_000);
	}
	return 0;
}

sub workers
{
	return $node->safe_psql('postgres',
		"SELECT string_agg(pid::text, ' ' ORDER BY pid) FROM pg_stat_activity WHERE backend_type = 'dynindex http'");
}

ok(wait_healthy(30), 'the endpoint answers GET / once the server is up');
my $health = HTTP::Tiny->new->get($url);
is($health->{content}, 'healthy: dynamodb.us-east-1.amazonaws.com ', "DynamoDB's health answer");
is($health->{headers}{server}, 'Server', 'Server: Server, as DynamoDB');
like($health->{headers}{'x-amzn-requestid'}, qr/^[A-Z0-9]{52}$/, 'a request id');
my @pids = split / /, workers();
is(scalar @pids, 2, 'dynindex_http.workers = 2 background workers');
like(slurp_file($node->logfile), qr/dynindex_http: development mode \(dynindex_http\.dev\): authentication is OFF/,
	'dev mode is announced in the log');

# ---- the wire protocol, as the gateway speaks it ----
my ($st, $j) = call('CreateTable', {
	TableName => 'Things', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ] });
is($st, 200, 'CreateTable');
is($j->{TableDescription}{TableArn}, 'arn:aws:dynamodb:us-east-1:000000000000:table/Things',
	'ARNs carry dynindex_http.region and dynindex.account_id');
($st, $j) = call('PutItem', { TableName => 'Things', Item => { pk => { S => 'a' }, v => { N => '1' } } });
is($st, 200, 'PutItem');
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
is_deeply($j, { Item => { pk => { S => 'a' }, v => { N => '1' } } }, 'GetItem reads it back');
my ($r, $deadline);
($st, $j, $r) = call('PutItem', { TableName => 'Things', Item => { pk => { S => 'a' } },
	ConditionExpression => 'attribute_not_exists(pk)' });
is($st, 400, 'a failed condition is HTTP 400');
is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', 'ConditionalCheckFailedException');
is($j->{message}, 'The conditional request failed', "DynamoDB's message");
is($r->{headers}{'content-type'}, 'application/x-amz-json-1.0', 'Content-Type follows the request');
($st, $j) = call('GetItem', '{"TableName": ');
is($st, 400, 'a body that is not JSON is HTTP 400');
is($j->{__type}, 'com.amazon.coral.service#SerializationException', 'SerializationException');
($st, $j) = call('NoSuchOperation', {});
is($j->{__type}, 'com.amazon.coral.service#UnknownOperationException', 'an unknown target');
($st, $j) = call('GetItem', { TableName => 'Nope', Key => { pk => { S => 'a' } } });
is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', 'an unknown table');

# ---- a configuration reload reaches the workers ----
$node->safe_psql('postgres', "ALTER SYSTEM SET dynindex.account_id = '123456789012'");
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
$deadline = time + 10;
my $arn = '';
while (time < $deadline)
{
	($st, $j) = call('DescribeTable', { TableName => 'Things' });
	$arn = $j->{Table}{TableArn} // '';
	last if $arn =~ /123456789012/;
	usleep(100_000);
}
is($arn, 'arn:aws:dynamodb:us-east-1:123456789012:table/Things', 'pg_reload_conf reaches the workers');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET dynindex.account_id');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');

# ---- each request is its own transaction ----
($st, $j) = call('TransactWriteItems', { TransactItems => [
	{ Put => { TableName => 'Things', Item => { pk => { S => 'b' } } } },
	{ ConditionCheck => { TableName => 'Things', Key => { pk => { S => 'a' } },
		ConditionExpression => 'v = :two', ExpressionAttributeValues => { ':two' => { N => '2' } } } } ] });
is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', 'a cancelled transaction');
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'b' } } });
is_deeply($j, {}, 'its Put was rolled back');
# keep-alive: several requests on one connection, answered in order
my $ka = HTTP::Tiny->new(timeout => 10, keep_alive => 1);
my @seen;
for my $i (1 .. 20)
{
	call('PutItem', { TableName => 'Things', Item => { pk => { S => "k$i" }, v => { N => "$i" } } }, $ka);
	my ($s, $g) = call('GetItem', { TableName => 'Things', Key => { pk => { S => "k$i" } } }, $ka);
	push @seen, $g->{Item}{v}{N} // 'none';
}
is_deeply(\@seen, [ 1 .. 20 ], 'requests on one keep-alive connection are answered in order');

# ---- a request that waits too long: HTTP 500, and the worker goes on ----
my $storage = $node->safe_psql('postgres', "SELECT storage FROM dynindex.tables WHERE table_name = 'Things'");
my $locker = $node->background_psql('postgres');
$locker->query_safe("BEGIN; LOCK TABLE $storage IN ACCESS EXCLUSIVE MODE;");
my $t0 = time;
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
my $waited = time - $t0;
is($st, 500, 'a request blocked past dynindex_http.request_timeout gets HTTP 500');
is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#InternalServerError', 'InternalServerError');
ok($waited >= 1.5 && $waited < 10, "after the timeout (${waited}s)");
$locker->query_safe('COMMIT;');
$locker->quit;
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
is($j->{Item}{v}{N}, '1', 'the next request is served');
like(slurp_file($node->logfile), qr/dynindex_http: GetItem cancelled after 2 s/, 'the timeout is logged');

# ---- DROP DATABASE: idle workers absorb its ProcSignalBarrier ----
$node->safe_psql('postgres', 'CREATE DATABASE dropme');
my ($ret) = $node->psql('postgres', 'DROP DATABASE dropme', timeout => 30);
is($ret, 0, 'DROP DATABASE completes while the workers wait for requests (they answer its barrier)');
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
is($j->{Item}{v}{N}, '1', 'and they go on serving');

# ---- pg_terminate_backend: the worker comes back ----
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pids[0])");
$deadline = time + 20;
my $now = '';
while (time < $deadline)
{
	$now = workers();
	last if scalar(split / /, $now) == 2 && $now !~ /\b$pids[0]\b/;
	usleep(200_000);
}
is(scalar(split / /, $now), 2, 'a terminated worker is started again');

# ---- kill -9 of a worker: crash restart, the endpoint comes back ----
@pids = split / /, workers();
kill 'KILL', $pids[0];
# the postmaster stops every backend, the other worker too, then restarts
$deadline = time + 30;
usleep(100_000) while time < $deadline && grep { -e "/proc/$_" } @pids;
ok(wait_healthy(60), 'after kill -9 of a worker the server restarts and the endpoint answers again');
($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'k20' } } });
is($j->{Item}{v}{N}, '20', 'committed items survived the crash restart');

# ---- the postmaster dies: the workers exit and free the port ----
my $pmpid = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
@pids = split / /, workers();
kill 'KILL', $pmpid;
$node->{_pid} = undef;    # Cluster.pm must not try to stop it
$deadline = time + 10;
my ($alive, $listening) = (1, 1);
while (time < $deadline)
{
	$alive = grep { -e "/proc/$_" && slurp_file("/proc/$_/stat") !~ /^\d+ \(.*\) Z / } @pids;
	my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1);
	$listening = $sock ? 1 : 0;
	close $sock if $sock;
	last if !$alive && !$listening;
	usleep(100_000);
}
ok(!$alive, 'the workers exit when the postmaster dies');
ok(!$listening, 'and the port is free');

# the other orphaned backends exit too; then the server starts again
sleep 3;
unlink($node->data_dir . '/postmaster.pid');
unlink(glob($node->host . '/.s.PGSQL.' . $node->port . '.lock'));
$node->start;
ok(wait_healthy(30), 'after a restart the endpoint is back');
$t0 = time;
$node->stop('fast');
ok(time - $t0 < 15, 'a fast shutdown stops the workers');

done_testing();
