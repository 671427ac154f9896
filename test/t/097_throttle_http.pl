# Throughput enforcement through the in-server endpoint (dynindex_http): four
# clients drive a provisioned table past its rate at once, and the share they
# are served is the token bucket's arithmetic exactly (counts, not timings:
# the buckets' clock is dynindex.throughput_test_clock, moved by the test).
# Every refusal is DynamoDB's ProvisionedThroughputExceededException with its
# message and ThrottlingReasons; the throttled requests are counted in
# dynindex.table_metrics and in the Prometheus export.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(usleep);
use POSIX ();

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $mport = PostgreSQL::Test::Cluster::get_free_port();
my $node = PostgreSQL::Test::Cluster->new('throttle_http');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'dynindex,dynindex_http'
dynindex_http.port = $port
dynindex_http.dev = on
dynindex_http.workers = 4
dynindex_http.metrics_port = $mport
dynindex.throughput_test_clock = 4000000
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
		content => encode_json($body),
	});
	my $json = eval { decode_json($r->{content}) } // {};
	return ($r->{status}, $json);
}

# n requests from each of four processes at once: (served, throttled, other) over all
sub drive
{
	my ($n, $make) = @_;
	my @files;
	for my $c (1 .. 4)
	{
		my $file = $node->basedir . "/drive_$c";
		push @files, $file;
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			my %count = (served => 0, throttled => 0, other => 0);
			my $http = HTTP::Tiny->new(timeout => 30);
			for my $i (1 .. $n)
			{
				my ($op, $body) = $make->($c, $i);
				my ($status, $json) = call($op, $body, $http);
				if ($status == 200) { $count{served}++ }
				elsif ($status == 400 && ($json->{__type} // '') =~ /#ProvisionedThroughputExceededException$/) { $count{throttled}++ }
				else { $count{other}++ }
			}
			open my $fh, '>', $file or die;
			print $fh "$count{served} $count{throttled} $count{other}\n";
			close $fh;
			POSIX::_exit(0);	# not exit: the test's END blocks would stop the node
		}
	}
	1 while wait() != -1;
	my @total = (0, 0, 0);
	for my $f (@files)
	{
		my @c = split ' ', slurp_file($f);
		$total[$_] += $c[$_] for 0 .. 2;
	}
	return @total;
}

# the endpoint's workers see a moved clock after the reload
sub set_clock
{
	my ($t) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET dynindex.throughput_test_clock = $t");
	$node->reload;
	usleep(500_000);
}

my $deadline = time + 30;
usleep(100_000) while time < $deadline && HTTP::Tiny->new(timeout => 2)->get($url)->{status} != 200;

my ($status, $res) = call('CreateTable', {
	TableName => 'tap_thr', BillingMode => 'PROVISIONED',
	ProvisionedThroughput => { ReadCapacityUnits => 2, WriteCapacityUnits => 1 },
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ],
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ] });
is($status, 200, 'CreateTable');
($status, $res) = call('UpdateContributorInsights', { TableName => 'tap_thr', ContributorInsightsAction => 'ENABLE' });
is($res->{ContributorInsightsStatus}, 'ENABLING', 'Contributor Insights enabled');
($status) = call('PutItem', { TableName => 'tap_thr', Item => { pk => { S => 'hot' } } });
is($status, 200, 'PutItem');

# reads: 2 RCU hold 600 units (300 seconds), a strongly consistent GetItem costs 1
my @r = drive(200, sub { ('GetItem', { TableName => 'tap_thr', Key => { pk => { S => 'hot' } }, ConsistentRead => JSON::PP::true }) });
is_deeply(\@r, [ 600, 200, 0 ], '800 reads from 4 clients: exactly 600 served (2 RCU x 300 s), 200 throttled');

($status, $res) = call('GetItem', { TableName => 'tap_thr', Key => { pk => { S => 'hot' } } });
is($status, 400, 'a throttled request is HTTP 400');
is($res->{__type}, 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', "DynamoDB's error type");
is($res->{message},
	'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
	"DynamoDB's message");
is_deeply($res->{ThrottlingReasons},
	[ { reason => 'TableReadProvisionedThroughputExceeded', resource => 'arn:aws:dynamodb:us-east-1:000000000000:table/tap_thr' } ],
	'ThrottlingReasons names the reason and the table');

# writes: 1 WCU holds 300 units, the PutItem above took 1
my @w = drive(100, sub { my ($c, $i) = @_; ('PutItem', { TableName => 'tap_thr', Item => { pk => { S => "w$c-$i" } } }) });
is_deeply(\@w, [ 299, 101, 0 ], '400 writes from 4 clients: exactly 299 served, 101 throttled');

# ten seconds later: 20 read units, 10 write units
set_clock(4000010);
@r = drive(10, sub { ('GetItem', { TableName => 'tap_thr', Key => { pk => { S => 'hot' } }, ConsistentRead => JSON::PP::true }) });
is_deeply(\@r, [ 20, 20, 0 ], 'after 10 s at 2 RCU: 20 more reads');
@w = drive(5, sub { my ($c, $i) = @_; ('PutItem', { TableName => 'tap_thr', Item => { pk => { S => "x$c-$i" } } }) });
is_deeply(\@w, [ 10, 10, 0 ], 'after 10 s at 1 WCU: 10 more writes');

# UpdateTable applies at once: 1 s at 50 WCU
($status) = call('UpdateTable', { TableName => 'tap_thr', ProvisionedThroughput => { ReadCapacityUnits => 2, WriteCapacityUnits => 50 } });
is($status, 200, 'UpdateTable to 50 WCU');
set_clock(4000011);
@w = drive(20, sub { my ($c, $i) = @_; ('PutItem', { TableName => 'tap_thr', Item => { pk => { S => "y$c-$i" } } }) });
is_deeply(\@w, [ 50, 30, 0 ], 'one second at the new 50 WCU: 50 writes');

# the counters: per event, per request, in SQL and in the Prometheus export
is($node->safe_psql('postgres',
	"SELECT read_throttle_events || ' ' || write_throttle_events || ' ' || throttled_requests FROM dynindex.table_metrics WHERE table_name = 'tap_thr'"),
	'221 141 362', 'table_metrics: ReadThrottleEvents, WriteThrottleEvents, ThrottledRequests');
my $m = HTTP::Tiny->new(timeout => 10)->get("http://127.0.0.1:$mport/metrics");
like($m->{content}, qr/^# TYPE dynindex_table_read_throttle_events counter$/m, 'exported as a counter');
like($m->{content}, qr/^dynindex_table_read_throttle_events\{table_name="tap_thr"\} 221$/m, 'read throttle events exported');
like($m->{content}, qr/^dynindex_table_throttled_requests\{table_name="tap_thr"\} 362$/m, 'throttled requests exported');
# Contributor Insights: "hot" was read 841 times and written once, 221 reads of it throttled
like($m->{content}, qr/^dynindex_contributor_insights_key_count\{table_name="tap_thr",rule="PKC",key="hot"\} 842$/m,
	'the most accessed key exported');
like($m->{content}, qr/^dynindex_contributor_insights_key_count\{table_name="tap_thr",rule="PKT",key="hot"\} 221$/m,
	'the most throttled key exported');
is($node->safe_psql('postgres', "SELECT key || ' ' || count FROM dynindex.contributor_insights('tap_thr') WHERE rule = 'PKT' AND rank = 1"),
	'hot 221', 'and in SQL');

$node->stop;
done_testing();
