# The gateway re-sends a request only when it certainly did not run.  A
# request whose backend dies while it runs may or may not have committed: the
# client gets InternalServerError (HTTP 500) and the gateway never sends it
# again, so a non-idempotent write (ADD n 1) cannot apply twice.  A request
# that finds its pooled connection already closed goes to a fresh one.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use IPC::Run;
use IO::Socket::INET;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('outcome');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

# One pooled connection, so the backend running a request is easy to find.
my ($out, $err) = ('', '');
my ($gw, $port) = start_gateway(\$out, \$err, '--dev', '--pool-size', '1',
	'--dbname', $node->connstr('postgres') . ' application_name=dynindex-gateway');
# a failing test must not leave the gateways running
our $gw2;
END { local $?; for my $h ($gw, $gw2) { $h->kill_kill if $h && $h->pumpable } }
ok($port, 'the gateway started') or BAIL_OUT("gateway did not start: $out $err");

my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);

sub call
{
	my ($op, $body) = @_;
	my $r = $http->post("http://127.0.0.1:$port/", {
		headers => {
			'Content-Type' => 'application/x-amz-json-1.0',
			'X-Amz-Target' => "DynamoDB_20120810.$op",
		},
		content => encode_json($body),
	});
	my $json = eval { decode_json($r->{content}) } // {};
	return ($r->{status}, $json);
}

# Send a request on a raw socket without waiting for the answer.
sub send_raw
{
	my ($op, $body) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
	  or die "connect: $!";
	my $b = encode_json($body);
	print $s "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
	  . "X-Amz-Target: DynamoDB_20120810.$op\r\nContent-Length: " . length($b) . "\r\n\r\n$b";
	$s->flush;
	return $s;
}

# Read one HTTP response from a raw socket: (status, decoded body).
sub read_raw
{
	my ($s) = @_;
	local $/;
	$s->timeout(30);
	my $buf = '';
	while ($buf !~ /\r\n\r\n/ || length($buf) < index($buf, "\r\n\r\n") + 4 + (($buf =~ /Content-Length: (\d+)/i)[0] // 0))
	{
		my $n = sysread($s, $buf, 65536, length($buf));
		last unless $n;
	}
	my ($status) = $buf =~ m{^HTTP/1\.1 (\d+)};
	my ($body) = $buf =~ m{\r\n\r\n(.*)$}s;
	return ($status // 0, eval { decode_json($body // '') } // {});
}

my $key = { pk => { S => 'c' } };
my $add = {
	TableName => 'Counter', Key => $key, UpdateExpression => 'ADD n :one',
	ExpressionAttributeValues => { ':one' => { N => '1' } }, ReturnValues => 'ALL_NEW' };
my ($st, $j) = call('CreateTable', {
	TableName => 'Counter', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ] });
is($st, 200, 'CreateTable') or diag(encode_json($j));
($st, $j) = call('PutItem', { TableName => 'Counter', Item => { pk => { S => 'c' }, n => { N => '0' } } });
is($st, 200, 'PutItem n = 0');

sub counter
{
	return $node->safe_psql('postgres',
		q{SELECT dynindex.api('GetItem', '{"TableName":"Counter","Key":{"pk":{"S":"c"}},"ConsistentRead":true}') #>> '{Item,n,N}'});
}

sub gateway_backend
{
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'dynindex-gateway' AND pid <> pg_backend_pid()");
}

# 1. A pooled connection closed while idle (its backend terminated): the next
#    request certainly did not run on it, and succeeds on a fresh connection.
my $pid = gateway_backend();
ok($pid, 'found the pooled backend');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
usleep(200_000);
($st, $j) = call('UpdateItem', $add);
is($st, 200, 'an idle connection lost: the next request runs on a fresh one');
is($j->{Attributes}{n}{N}, '1', '  ... and ran once (n = 1)');

# 2. The backend is terminated while it runs the request (blocked on a row
#    lock held by another session): outcome unknown, 500, never re-sent.
for my $how ('terminate', 'kill9')
{
	my $before = counter();
	my $bg = $node->background_psql('postgres', on_error_stop => 1);
	$bg->query_safe('BEGIN');
	$bg->query_safe(q{SELECT dynindex.api('UpdateItem', '{"TableName":"Counter","Key":{"pk":{"S":"c"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"S":"locked"}}}')});
	my $s = send_raw('UpdateItem', $add);
	my $waiting = 0;
	for (1 .. 100)
	{
		$waiting = $node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE application_name = 'dynindex-gateway' AND wait_event_type = 'Lock'");
		last if $waiting;
		usleep(100_000);
	}
	ok($waiting, "$how: the gateway's request waits for the row lock");
	if ($how eq 'terminate')
	{
		$node->safe_psql('postgres', "SELECT pg_terminate_backend($waiting)");
	}
	else
	{
		kill 'KILL', $waiting;
	}
	($st, $j) = read_raw($s);
	close($s);
	is($st, 500, "$how: the request whose backend died gets HTTP 500");
	is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#InternalServerError', '  ... InternalServerError');
	if ($how eq 'terminate')
	{
		$bg->query_safe('ROLLBACK');
		$bg->quit;
	}
	else
	{
		eval { $bg->quit };    # the crash ended that session too
		$node->poll_query_until('postgres', 'SELECT true') or die 'server did not recover';
	}
	# Had the gateway re-sent the request, it would run now that the lock is gone.
	sleep 1;
	is(counter(), $before, "$how: the request was not re-sent (n unchanged)");
	$gw->pump_nb;
	like($err, qr/outcome is unknown/, "$how: the gateway logged the unknown outcome");
	($st, $j) = call('UpdateItem', $add);
	is($st, 200, "$how: the next request succeeds");
	is($j->{Attributes}{n}{N}, $before + 1, '  ... once');
}

# 3. A request that waits too long (--request-timeout 2): InternalServerError
#    instead of a hang; its statement is cancelled, so it did not run, and the
#    connection serves the next request.
my ($out2, $err2) = ('', '');
($gw2, my $port2) = start_gateway(\$out2, \$err2, '--dev', '--pool-size', '1', '--request-timeout', '2',
	'--dbname', $node->connstr('postgres') . ' application_name=dynindex-gateway-2');
ok($port2, 'a second gateway with --request-timeout 2 started');
{
	my $before = counter();
	my $bg = $node->background_psql('postgres', on_error_stop => 1);
	$bg->query_safe('BEGIN');
	$bg->query_safe(q{SELECT dynindex.api('UpdateItem', '{"TableName":"Counter","Key":{"pk":{"S":"c"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"S":"locked"}}}')});
	my $port_save = $port;
	$port = $port2;
	my $t0 = time;
	my $s = send_raw('UpdateItem', $add);
	($st, $j) = read_raw($s);
	my $secs = time - $t0;
	close($s);
	is($st, 500, 'a request blocked past --request-timeout gets HTTP 500');
	is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#InternalServerError', '  ... InternalServerError');
	cmp_ok($secs, '<', 20, '  ... without waiting for the lock');
	$bg->query_safe('ROLLBACK');
	$bg->quit;
	sleep 1;
	is(counter(), $before, '  ... its statement was cancelled (n unchanged)');
	($st, $j) = call('UpdateItem', $add);
	is($st, 200, '  ... and the connection serves the next request');
	is($j->{Attributes}{n}{N}, $before + 1, '  ... once');
	$port = $port_save;
}
$gw2->signal('TERM');
$gw2->finish;

ok($gw->pumpable, 'the gateway is still running');
$gw->signal('TERM');
$gw->finish;
$node->stop;
done_testing();
