# dynindex_http's Prometheus endpoint (dynindex_http.metrics_port): a
# background worker of its own sums the counters every request worker keeps
# in shared memory.  Requests on many connections, spread by the kernel over
# three workers, are all counted once: by operation, by error type, in the
# latency histogram's count, per worker (the workers' counts add up to the
# total, and more than one worker answered), the connections accepted; the
# per-table counters of dynindex.table_metrics come along.  A worker
# terminated and started again keeps its counts.  Counts only, never timings.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time usleep);

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $mport = PostgreSQL::Test::Cluster::get_free_port();
my $node = PostgreSQL::Test::Cluster->new('http_metrics');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'dynindex,dynindex_http'
dynindex_http.port = $port
dynindex_http.dev = on
dynindex_http.workers = 3
dynindex_http.metrics_port = $mport
EOC
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my $url = "http://127.0.0.1:$port/";
my $murl = "http://127.0.0.1:$mport/metrics";

# One request on a connection of its own (the kernel picks the worker per connection).
sub call
{
	my ($op, $body) = @_;
	my $r = HTTP::Tiny->new(timeout => 30, keep_alive => 0)->post($url, {
		headers => {
			'Content-Type' => 'application/x-amz-json-1.0',
			'X-Amz-Target' => "DynamoDB_20120810.$op",
		},
		content => encode_json($body),
	});
	return $r->{status};
}

# The samples of one scrape: { 'name{labels}' => value }.
sub scrape
{
	my $r = HTTP::Tiny->new(timeout => 10, keep_alive => 0)->get($murl);
	return undef unless $r->{status} == 200;
	my %m;
	for (split /\n/, $r->{content})
	{
		next if /^#/;
		$m{$1} = $2 if /^(\S+) (\S+)$/;
	}
	return \%m;
}

sub wait_for
{
	my ($cond, $seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		return 1 if $cond->();
		usleep(100_000);
	}
	return 0;
}

sub sum_of
{
	my ($m, $re) = @_;
	my $s = 0;
	$s += $m->{$_} for grep { /$re/ } keys %$m;
	return $s;
}

ok(wait_for(sub { HTTP::Tiny->new(timeout => 2)->get($url)->{status} == 200 && scrape() }, 30),
	'the endpoint and its metrics port answer once the server is up');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dynindex http metrics'"),
	'1', 'one metrics worker beside the request workers');
like(slurp_file($node->logfile), qr{dynindex_http metrics on http://127\.0\.0\.1:$mport/metrics},
	'the metrics endpoint is announced in the log');

my $m = scrape();
is($m->{dynindex_gateway_table_metrics_up}, 1, 'dynindex.table_metrics read for the scrape');
is(sum_of($m, qr/^dynindex_gateway_requests_total\{operation="(?!-")/), 0, 'no API request counted yet');
is(scalar(grep { /^dynindex_http_worker_requests_total\{worker="\d"\}$/ } keys %$m), 3,
	'a request counter per worker');

my ($puts, $misses, $bad) = (60, 15, 5);
is(call('CreateTable', {
			TableName => 'Metered',
			KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ],
			AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ],
			BillingMode => 'PAY_PER_REQUEST' }), 200, 'CreateTable');
my $ok = 0;
$ok += call('PutItem', { TableName => 'Metered', Item => { pk => { S => "k$_" } } }) == 200 for 1 .. $puts;
is($ok, $puts, "$puts PutItems, each on a new connection");
my $nf = 0;
$nf += call('GetItem', { TableName => 'Missing', Key => { pk => { S => 'k' } } }) == 400 for 1 .. $misses;
is($nf, $misses, "$misses GetItems of a missing table");
my $v = 0;
$v += call('GetItem', { TableName => 'Metered' }) == 400 for 1 .. $bad;
is($v, $bad, "$bad GetItems without a Key");
my $total = 1 + $puts + $misses + $bad;

$m = scrape();
is($m->{'dynindex_gateway_requests_total{operation="PutItem"}'}, $puts, 'PutItems counted once each');
is($m->{'dynindex_gateway_requests_total{operation="GetItem"}'}, $misses + $bad, 'GetItems counted');
is($m->{'dynindex_gateway_requests_total{operation="CreateTable"}'}, 1, 'CreateTable counted');
is(sum_of($m, qr/^dynindex_gateway_requests_total\{operation="(?!-")/), $total, 'the total is every request sent');
is($m->{'dynindex_gateway_errors_total{operation="GetItem",error="ResourceNotFoundException"}'}, $misses,
	'ResourceNotFoundException by operation');
is($m->{'dynindex_gateway_errors_total{operation="GetItem",error="ValidationException"}'}, $bad,
	'ValidationException by operation');
is(sum_of($m, qr/^dynindex_gateway_errors_total\{/), $misses + $bad, 'no other errors');
is($m->{'dynindex_gateway_request_duration_seconds_count{operation="PutItem"}'}, $puts,
	'the latency histogram counts every PutItem');
is($m->{'dynindex_gateway_request_duration_seconds_bucket{operation="PutItem",le="+Inf"}'}, $puts,
	'its +Inf bucket too');
my $all = sum_of($m, qr/^dynindex_gateway_requests_total\{/);    # the health checks (operation "-") too
is(sum_of($m, qr/^dynindex_http_worker_requests_total\{/), $all, "the workers' counts add up to the total");
my $busy = grep { $m->{$_} > 0 } grep { /^dynindex_http_worker_requests_total\{/ } keys %$m;
cmp_ok($busy, '>=', 2, "requests went through several workers ($busy of 3)");
cmp_ok($m->{dynindex_gateway_connections_accepted_total}, '>=', $total,
	'every connection accepted is counted (one per request, the health checks besides)');
is($m->{dynindex_gateway_requests_in_flight}, 0, 'nothing in flight');
ok(wait_for(sub { (scrape()->{dynindex_gateway_connections} // -1) == 0 }, 10),
	'closed connections leave the connections gauge at 0');
ok(wait_for(sub {
			(scrape()->{'dynindex_table_successful_requests{table_name="Metered"}'} // 0) == 1 + $puts }, 10),
	"dynindex.table_metrics' counters of the table (CreateTable and the PutItems)");
is(scrape()->{'dynindex_table_consumed_write_capacity_units{table_name="Metered"}'}, $puts,
	'one write unit per PutItem');

# A request worker terminated: started again after 5 s, its counts kept.
my ($pid) = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex http' ORDER BY pid LIMIT 1");
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(wait_for(sub {
			$node->safe_psql('postgres',
				"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dynindex http' AND pid <> $pid") == 3
		}, 30),
	'the terminated worker is started again');
$m = scrape();
is(sum_of($m, qr/^dynindex_gateway_requests_total\{/), $all, 'the total survives a worker restart');
is(sum_of($m, qr/^dynindex_http_worker_requests_total\{/), $all, "so do the workers' counts");
is(call('PutItem', { TableName => 'Metered', Item => { pk => { S => 'after' } } }), 200,
	'a request after the restart');
$m = scrape();
is($m->{'dynindex_gateway_requests_total{operation="PutItem"}'}, $puts + 1, 'and it is counted');
is(sum_of($m, qr/^dynindex_http_worker_requests_total\{/), $all + 1, 'by one worker');
cmp_ok($m->{dynindex_gateway_scrapes_total}, '>=', 5, 'scrapes are counted');

$node->stop('fast');
done_testing();
