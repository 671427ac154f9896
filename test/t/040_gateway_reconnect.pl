# The gateway outlives its database: requests while PostgreSQL is down get a
# quick InternalServerError (never a hang or a crash), and once the server is
# back, after a clean restart or after kill -9, the next request succeeds on a
# fresh connection without restarting the gateway.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use IPC::Run;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('gateway');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

# --port 0: the gateway picks a free port and prints it.
my ($out, $err) = ('', '');
my $conninfo = $node->connstr('postgres');
my ($gw, $port) = start_gateway(\$out, \$err, '--dev', '--pool-size', '4', '--dbname', $conninfo);
# a failing test must not leave the gateway running
END { local $?; $gw->kill_kill if $gw && $gw->pumpable; }
ok($port, 'the gateway started') or BAIL_OUT("gateway did not start: $out $err");

my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);

sub call
{
	my ($op, $body) = @_;
	my $t0 = time;
	my $r = $http->post("http://127.0.0.1:$port/", {
		headers => {
			'Content-Type' => 'application/x-amz-json-1.0',
			'X-Amz-Target' => "DynamoDB_20120810.$op",
		},
		content => encode_json($body),
	});
	my $json = eval { decode_json($r->{content}) } // {};
	return ($r->{status}, $json, time - $t0);
}

my $item = { TableName => 'Things', Item => { pk => { S => 'a' }, v => { N => '1' } } };
my ($st, $j) = call('CreateTable', {
	TableName => 'Things', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ] });
is($st, 200, "CreateTable through the gateway") or diag(encode_json($j));
# Use every pooled connection, so each of them has to notice the restart.
for (1 .. 8)
{
	($st) = call('PutItem', $item);
	is($st, 200, "PutItem $_ before the restart") if $_ == 1;
}

for my $how ('fast', 'immediate')
{
	$node->stop($how);
	my $secs;
	($st, $j, $secs) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
	is($st, 500, "server down ($how stop): 500");
	is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#InternalServerError',
		'  ... InternalServerError');
	cmp_ok($secs, '<', 10, '  ... answered without waiting for the server');

	$node->start;
	# Several requests in a row: each pooled connection must reconnect.
	my $ok = 0;
	for (1 .. 8)
	{
		($st, $j) = call('GetItem', { TableName => 'Things', Key => { pk => { S => 'a' } } });
		$ok++ if $st == 200 && ($j->{Item}{v}{N} // '') eq '1';
	}
	is($ok, 8, "after the $how restart every request succeeds");
}

# kill -9 of a backend: the postmaster restarts all sessions (crash recovery).
my $pid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1");
ok($pid, 'found a gateway backend');
kill 'KILL', $pid;
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not recover';
my $ok = 0;
for (1 .. 8)
{
	($st, $j) = call('PutItem', $item);
	$ok++ if $st == 200;
}
is($ok, 8, 'after kill -9 of a backend and crash recovery every request succeeds');

ok($gw->pumpable, 'the gateway is still running');
$gw->signal('TERM');
$gw->finish;
$node->stop;
done_testing();
