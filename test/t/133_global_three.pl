# Global tables with three regions, made through the API
# (docs/global-tables.md): us-east-1 adds a replica in eu-west-1, then — while
# writers run on both — one in ap-south-1, whose initial copy comes from both
# existing replicas (a change made in eu-west-1 is sent by eu-west-1 only).
# Then writers on all three regions, over the same keys.  Every region ends
# with the same items, compared item by item, and every GSI verifies.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynGlobal;

my $a = bare_region_node('ta', 'us-east-1');
my $b = bare_region_node('tb', 'eu-west-1');
my $c = bare_region_node('tc', 'ap-south-1');
declare_both([ $a, 'us-east-1' ], [ $b, 'eu-west-1' ], [ $c, 'ap-south-1' ]);

api($a, 'CreateTable', '{"TableName":"Tri","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}');
$a->safe_psql('postgres', q{SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Tri', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'p' || i), 'sk', jsonb_build_object('N', '1'), 'g', jsonb_build_object('S', 'g' || (i % 5)),
  'v', jsonb_build_object('N', i::text)))) FROM generate_series(1, 300) i});

my $script = "$PostgreSQL::Test::Utils::tmp_check/three_load.sql";
open(my $fh, '>', $script) or die;
print $fh <<'SQL';
\set k random(1, 400)
\set v random(1, 1000000)
\set d random(1, 10)
SELECT CASE
  WHEN :d = 1 THEN dynindex.api('DeleteItem', jsonb_build_object('TableName', 'Tri', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'))))
  WHEN :d <= 3 THEN dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Tri', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1')),
    'UpdateExpression', 'ADD n :one SET g = :g', 'ExpressionAttributeValues',
    jsonb_build_object(':one', jsonb_build_object('N', '1'), ':g', jsonb_build_object('S', 'g' || (:k % 7)))))
  ELSE dynindex.api('PutItem', jsonb_build_object('TableName', 'Tri', 'Item',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'),
      'g', jsonb_build_object('S', 'g' || (:k % 5)), 'v', jsonb_build_object('N', :v::text))))
END;
SQL
close($fh);

# $clients writers on $n for $secs seconds, in the background.
sub load
{
	my ($n, $clients, $secs) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start([ 'pgbench', '-n', '-c', $clients, '-j', '1', '-T', $secs, '-f', $script,
		'-h', $n->host, '-p', $n->port, 'postgres' ], '>', \$out, '2>', \$err);
}

# Wait until DescribeTable of Tri on $n shows $want.
sub wait_state
{
	my ($n, $want) = @_;
	for (1 .. 1200)
	{
		return 1 if replica_state($n, 'Tri') eq $want;
		usleep(100_000);
	}
	diag('state on ' . $n->name . ': ' . replica_state($n, 'Tri'));
	return 0;
}

# us-east-1 adds eu-west-1
api($a, 'UpdateTable', '{"TableName":"Tri","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}');
ok(wait_state($a, 'ACTIVE eu-west-1:ACTIVE'), 'us-east-1 adds eu-west-1: ACTIVE');
ok(tables_converged([ $a, $b ], 'Tri', 60), 'eu-west-1 has every item');

# writes on both while us-east-1 adds ap-south-1: its copy comes from both
my @h = (load($a, 3, 6), load($b, 3, 6));
sleep 1;
api($a, 'UpdateTable', '{"TableName":"Tri","ReplicaUpdates":[{"Create":{"RegionName":"ap-south-1"}}]}');
ok(wait_state($a, 'ACTIVE ap-south-1:ACTIVE eu-west-1:ACTIVE'), 'us-east-1 adds ap-south-1 while both write: ACTIVE');
$_->finish for @h;
is(replica_state($b, 'Tri'), 'ACTIVE ap-south-1:ACTIVE us-east-1:ACTIVE', 'eu-west-1 sees the new replica ACTIVE');
is(replica_state($c, 'Tri'), 'ACTIVE eu-west-1:ACTIVE us-east-1:ACTIVE', 'ap-south-1 is replicated with both');
ok(tables_converged([ $a, $b, $c ], 'Tri', 120), 'the three regions hold the same items after writes in two of them during the copy');

# writers in all three regions over the same keys
@h = (load($a, 3, 5), load($b, 3, 5), load($c, 3, 5));
$_->finish for @h;
is($_->result(0), 0, 'the writers ran without errors') for @h;
ok(tables_converged([ $a, $b, $c ], 'Tri', 120), 'writers in all three regions: the same items everywhere');
for my $n ($a, $b, $c)
{
	$n->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Tri', '60 seconds')});
	is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Tri') WHERE missing + extra + stale > 0}),
		'0', 'the GSI of ' . $n->name . ' verifies');
}
ok($a->safe_psql('postgres', q{SELECT count(*) FROM dynindex.read_all('Scan', '{"TableName":"Tri"}')}) > 100, 'the table has items');

done_testing();
