# An idle database costs nothing measurable (issue #23 item 10): its worker
# sleeps on its latch until there is work or a deadline, instead of waking
# every dynindex.worker_naptime and maintaining streams every
# dynindex.stream_maintenance_interval.  Counted as the worker's wake-ups
# (voluntary context switches in /proc) over an idle stretch, with dynindex's
# default intervals and tables with streams, a GSI and Time to Live.  Then the
# worker still does its work at once: a write's GSI change, a GSI added by
# UpdateTable (its backfill), a stream's first records.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('worker_idle');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
# dynindex's defaults (test/dynindex.conf turns TTL and stream maintenance off)
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

sub create
{
	my ($name, $extra) = @_;
	$node->safe_psql('postgres', qq{SELECT dynindex.api('CreateTable', '{"TableName":"$name","BillingMode":"PAY_PER_REQUEST",
	  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}@{[ $extra =~ /byG/ ? ',{"AttributeName":"g","AttributeType":"S"}' : '' ]}],
	  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]$extra}')});
	$node->safe_psql('postgres', qq{SELECT dynindex.api('PutItem', '{"TableName":"$name","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}')});
}
create("Stream$_", ',"StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"}') for 1 .. 4;
create('WithGsi', ',"GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
create('Plain', '');
$node->safe_psql('postgres', q{SELECT dynindex.api('UpdateTimeToLive', '{"TableName":"Plain","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}}')});
ok($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('WithGsi')}) eq 't', 'the GSI is up to date');

my $pid = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex worker' AND datname = 'postgres'});
ok($pid, "the database's worker runs ($pid)");

# wake-ups of the worker so far: each sleep on its latch that ends is one voluntary switch
sub wakeups
{
	my ($v) = slurp_file("/proc/$pid/status") =~ /^voluntary_ctxt_switches:\s+(\d+)/m;
	return $v;
}

# let it settle (a few polls after the last wake-up), then count over an idle stretch
sleep 8;
my $before = wakeups();
sleep 20;
my $idle = wakeups() - $before;
# before: one round per naptime (1 s) and stream maintenance every 5 s, each
# round several waits: dozens of wake-ups in 20 s
cmp_ok($idle, '<=', 6, "the idle worker woke $idle times in 20 s (at most a deadline's)");

# work is still done at once: a GSI change, a new GSI's backfill, stream records
$node->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"WithGsi","Item":{"pk":{"S":"b"},"g":{"S":"y"}}}')});
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('WithGsi', '60 s')}), 't', 'a write after the idle stretch is indexed');
is($node->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"WithGsi","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"y"}}}') ->> 'Count'}),
	'1', '  ... the GSI has it');
$node->safe_psql('postgres', q{SELECT dynindex.api('UpdateTable', '{"TableName":"Plain","AttributeDefinitions":[{"AttributeName":"g","AttributeType":"S"}],
  "GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}')});
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Plain', '60 s')}), 't', 'a GSI added after the idle stretch is backfilled');
is($node->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName":"Plain"}') #>> '{Table,GlobalSecondaryIndexes,0,IndexStatus}'}),
	'ACTIVE', '  ... and ACTIVE');

$node->stop;
done_testing();
