# Global tables: adding and removing a replica through the API
# (UpdateTable ReplicaUpdates Create and Delete; docs/global-tables.md).
# us-east-1 has the table Rep (an LSI, a GSI with an INCLUDE projection, Time
# to Live, no stream) with items; eu-west-1 has nothing.  A Create of
# eu-west-1 while 8 writers put, update and delete on us-east-1: UPDATING
# with the replica CREATING, then ACTIVE on both sides; eu-west-1's table has
# the same definition and every item (compared item by item), its indexes
# verify, and writes replicate both ways.  An empty table becomes global.
# Update: the replica's read capacity, GSI and table class overrides applied to
# eu-west-1's table and shown in DescribeTable's Replicas.
# Delete: DELETING, then the replica is gone on both sides, eu-west-1's table
# is deleted and the slots no table needs are dropped; re-added, it copies
# again.  A Create interrupted by SIGKILL of us-east-1 during the copy
# resumes after the restart and ends ACTIVE with every item.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use DynGlobal;

my $east = bare_region_node('aeast', 'us-east-1');
my $west = bare_region_node('awest', 'eu-west-1');
declare_both([ $east, 'us-east-1' ], [ $west, 'eu-west-1' ]);

api($east, 'CreateTable', '{"TableName":"Rep","BillingMode":"PROVISIONED","ProvisionedThroughput":{"ReadCapacityUnits":500,"WriteCapacityUnits":500},
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},
    {"AttributeName":"g","AttributeType":"S"},{"AttributeName":"l","AttributeType":"N"}],
  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],
    "Projection":{"ProjectionType":"KEYS_ONLY"}}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],
    "Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["v"]},"ProvisionedThroughput":{"ReadCapacityUnits":300,"WriteCapacityUnits":300}}]}');
api($east, 'UpdateTimeToLive', '{"TableName":"Rep","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}}');
api($east, 'CreateTable', '{"TableName":"Empty","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}]}');
# items written before the table is global (never stamped), some deleted (no tombstone: never stamped either)
$east->safe_psql('postgres', q{SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Rep', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'p' || i), 'sk', jsonb_build_object('N', '1'), 'g', jsonb_build_object('S', 'g' || (i % 7)),
  'l', jsonb_build_object('N', (i % 13)::text), 'v', jsonb_build_object('N', i::text)))) FROM generate_series(1, 400) i});

# 8 writers on us-east-1: puts, counter updates and deletes over 300 keys (half of them existing)
my $script = "$PostgreSQL::Test::Utils::tmp_check/replica_load.sql";
open(my $fh, '>', $script) or die;
print $fh <<'SQL';
\set k random(200, 500)
\set v random(1, 1000000)
\set d random(1, 10)
SELECT CASE
  WHEN :d = 1 THEN dynindex.api('DeleteItem', jsonb_build_object('TableName', 'Rep', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'))))
  WHEN :d <= 3 THEN dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Rep', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1')),
    'UpdateExpression', 'ADD n :one SET g = :g', 'ExpressionAttributeValues',
    jsonb_build_object(':one', jsonb_build_object('N', '1'), ':g', jsonb_build_object('S', 'g' || (:k % 5)))))
  ELSE dynindex.api('PutItem', jsonb_build_object('TableName', 'Rep', 'Item',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'),
      'g', jsonb_build_object('S', 'g' || (:k % 7)), 'l', jsonb_build_object('N', (:k % 11)::text),
      'v', jsonb_build_object('N', :v::text))))
END;
SQL
close($fh);

# $clients writers on $n for $secs seconds, in the background.
sub load
{
	my ($n, $clients, $secs) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start([ 'pgbench', '-n', '-c', $clients, '-j', '2', '-T', $secs, '-f', $script,
		'-h', $n->host, '-p', $n->port, 'postgres' ], '>', \$out, '2>', \$err);
}

# Wait until DescribeTable of $table on $n shows $want; true if it did within $secs seconds.
sub wait_state
{
	my ($n, $table, $want, $secs) = @_;
	for (1 .. 10 * ($secs // 120))
	{
		my $got = replica_state($n, $table);
		return 1 if $got eq $want;
		usleep(100_000);
	}
	diag('state of ' . $table . ' on ' . $n->name . ': ' . replica_state($n, $table));
	return 0;
}

# Every index of $table on $n verifies.
sub indexes_verify
{
	my ($n, $table) = @_;
	$n->safe_psql('postgres', qq{SELECT dynindex.wait_for_indexes('$table', '60 seconds')});
	return $n->safe_psql('postgres', qq{SELECT count(*) FROM dynindex.verify_indexes('$table') WHERE missing + extra + stale > 0});
}

# == Create under 8 writers ==
my $h = load($east, 8, 6);
sleep 1;
my $resp = $east->safe_psql('postgres', q{SELECT d->>'TableStatus' || ' ' || (d->>'GlobalTableVersion') || ' ' || (d->'Replicas')::text
  || ' ' || (d->'StreamSpecification'->>'StreamViewType')
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName":"Rep","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}')->'TableDescription' AS d) s});
is($resp, 'UPDATING 2019.11.21 [{"RegionName": "eu-west-1", "ReplicaStatus": "CREATING"}] NEW_AND_OLD_IMAGES',
	'UpdateTable Create: UPDATING, the replica CREATING, the stream turned on (NEW_AND_OLD_IMAGES)');
ok(wait_state($east, 'Rep', 'ACTIVE eu-west-1:ACTIVE'), 'the replica turns ACTIVE, and the table ACTIVE');
$h->finish;
is($h->result(0), 0, 'the 8 writers ran without errors during the creation');
is(replica_state($west, 'Rep'), 'ACTIVE us-east-1:ACTIVE', 'eu-west-1 has the table, replicated with us-east-1');
ok(tables_converged([ $east, $west ], 'Rep', 120), 'every item is the same on both sides (8 writers during the copy)');
is(indexes_verify($west, 'Rep'), '0', 'the LSI and the GSI of eu-west-1 verify');
is(indexes_verify($east, 'Rep'), '0', 'the indexes of us-east-1 verify');
is($west->safe_psql('postgres', q{SELECT (d->'ProvisionedThroughput'->>'WriteCapacityUnits') || ' ' || coalesce(d->'BillingModeSummary'->>'BillingMode', 'provisioned from the start')
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Rep"}')->'Table' AS d) s}),
	'500 provisioned from the start', 'the replica has the billing mode (provisioned, no BillingModeSummary as DynamoDB shows a table provisioned from its creation)');
is($west->safe_psql('postgres', q{SELECT (d->'ProvisionedThroughput'->>'ReadCapacityUnits') || ' ' || (d->'LocalSecondaryIndexes'->0->>'IndexName') || ' '
  || (d->'LocalSecondaryIndexes'->0->'Projection'->>'ProjectionType') || ' ' || (d->'GlobalSecondaryIndexes'->0->>'IndexName') || ' '
  || (d->'GlobalSecondaryIndexes'->0->'Projection')::text || ' ' || (d->'GlobalSecondaryIndexes'->0->'ProvisionedThroughput'->>'WriteCapacityUnits') || ' '
  || (d->'StreamSpecification'->>'StreamViewType')
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Rep"}')->'Table' AS d) s}),
	'500 byL KEYS_ONLY byG {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v"]} 300 NEW_AND_OLD_IMAGES',
	'the replica has the throughput, the LSI, the GSI with its projection and throughput, the stream');
is($west->safe_psql('postgres', q{SELECT (d->>'TimeToLiveStatus') || ' ' || (d->>'AttributeName')
  FROM (SELECT dynindex.api('DescribeTimeToLive', '{"TableName":"Rep"}')->'TimeToLiveDescription' AS d) s}),
	'ENABLED exp', 'the replica has Time to Live on the same attribute');
ok($west->safe_psql('postgres', q{SELECT count(*) FROM dynindex.read_all('Scan', '{"TableName":"Rep"}')}) > 300, 'eu-west-1 has the items');

# writes both ways after the creation
api($west, 'PutItem', '{"TableName":"Rep","Item":{"pk":{"S":"w1"},"sk":{"N":"1"},"g":{"S":"gw"},"l":{"N":"1"},"v":{"N":"1"}}}');
api($east, 'UpdateItem', '{"TableName":"Rep","Key":{"pk":{"S":"p1"},"sk":{"N":"1"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"N":"-1"}}}');
api($east, 'DeleteItem', '{"TableName":"Rep","Key":{"pk":{"S":"p2"},"sk":{"N":"1"}}}');
ok(tables_converged([ $east, $west ], 'Rep', 60), 'writes on either side reach the other after the creation');
is($east->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Rep","Key":{"pk":{"S":"w1"},"sk":{"N":"1"}}}') ? 'Item'}),
	't', 'a put in the new replica reaches us-east-1');

# == Update: the replica's overrides, applied to eu-west-1's table, shown in Replicas ==
$resp = $east->safe_psql('postgres', q{SELECT d->>'TableStatus' || ' ' || (d->'Replicas'->0->>'ReplicaStatus')
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName":"Rep","ReplicaUpdates":[{"Update":{"RegionName":"eu-west-1",
    "ProvisionedThroughputOverride":{"ReadCapacityUnits":700},"GlobalSecondaryIndexes":[{"IndexName":"byG","ProvisionedThroughputOverride":{"ReadCapacityUnits":350}}],
    "TableClassOverride":"STANDARD_INFREQUENT_ACCESS"}}]}')->'TableDescription' AS d) s});
is($resp, 'UPDATING UPDATING', 'UpdateTable Update: the table and the replica UPDATING');
ok(wait_state($east, 'Rep', 'ACTIVE eu-west-1:ACTIVE'), 'the replica is ACTIVE again');
is($east->safe_psql('postgres', q{SELECT (r->'ProvisionedThroughputOverride')::text || ' ' || (r->'GlobalSecondaryIndexes')::text || ' ' || (r->'ReplicaTableClassSummary'->>'TableClass')
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Rep"}')->'Table'->'Replicas'->0 AS r) s}),
	'{"ReadCapacityUnits": 700} [{"IndexName": "byG", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 350}}] STANDARD_INFREQUENT_ACCESS',
	'DescribeTable in us-east-1 shows the overrides of the replica');
is($west->safe_psql('postgres', q{SELECT (d->'ProvisionedThroughput'->>'ReadCapacityUnits') || ' ' || (d->'ProvisionedThroughput'->>'WriteCapacityUnits') || ' '
  || (d->'GlobalSecondaryIndexes'->0->'ProvisionedThroughput'->>'ReadCapacityUnits') || ' ' || (d->'GlobalSecondaryIndexes'->0->'ProvisionedThroughput'->>'WriteCapacityUnits') || ' '
  || (d->'TableClassSummary'->>'TableClass')
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Rep"}')->'Table' AS d) s}),
	'700 500 350 300 STANDARD_INFREQUENT_ACCESS', 'the table of eu-west-1 has the overrides (reads; writes stay the table\'s)');
is($east->safe_psql('postgres', q{SELECT (d->'ProvisionedThroughput'->>'ReadCapacityUnits') || ' ' || coalesce(d->'TableClassSummary'->>'TableClass', 'STANDARD')
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Rep"}')->'Table' AS d) s}),
	'500 STANDARD', 'the table of us-east-1 keeps its own settings');

# an empty table
api($east, 'UpdateTable', '{"TableName":"Empty","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}');
ok(wait_state($east, 'Empty', 'ACTIVE eu-west-1:ACTIVE'), 'an empty table: the replica turns ACTIVE');
is(table_items($west, 'Empty'), '', 'eu-west-1 has the empty table');
api($west, 'PutItem', '{"TableName":"Empty","Item":{"pk":{"S":"x"},"sk":{"N":"1"}}}');
ok(tables_converged([ $east, $west ], 'Empty', 60), 'and it replicates');

# request-side rules once the replica exists
my ($rc, $out, $err) = $east->psql('postgres', q{SELECT dynindex.api('UpdateTable', '{"TableName":"Rep","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}')});
like($err, qr/ValidationException: Failed to create a the new replica of table with name: \S+Rep\S+ because one or more replicas already existed as tables\./,
	'a Create of a region the table has a replica in: DynamoDB\'s message');

# == Delete ==
$resp = $east->safe_psql('postgres', q{SELECT d->>'TableStatus' || ' ' || (d->'Replicas')::text
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName":"Empty","ReplicaUpdates":[{"Delete":{"RegionName":"eu-west-1"}}]}')->'TableDescription' AS d) s});
is($resp, 'UPDATING [{"RegionName": "eu-west-1", "ReplicaStatus": "DELETING"}]', 'UpdateTable Delete: UPDATING, the replica DELETING');
ok(wait_state($east, 'Empty', 'ACTIVE'), 'the replica is gone: the table is not global any more');
($rc, $out, $err) = $west->psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName":"Empty"}')});
like($err, qr/ResourceNotFoundException/, 'the table of eu-west-1 is deleted');
# Rep still needs the slots
is($east->safe_psql('postgres', q{SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'dynindex_eu_west_1'}), '1',
	'us-east-1 keeps its slot for eu-west-1 while Rep needs it');
api($east, 'UpdateTable', '{"TableName":"Rep","ReplicaUpdates":[{"Delete":{"RegionName":"eu-west-1"}}]}');
ok(wait_state($east, 'Rep', 'ACTIVE'), 'Rep: the replica is gone');
for my $n ($east, $west)
{
	ok($n->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_replication_slots WHERE slot_name LIKE 'dynindex_%'}),
		$n->name . ': the slots no replicated table needs are dropped');
	is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.replicas}), '0', $n->name . ': no replica left');
}
ok($east->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dynindex apply'}),
	'us-east-1: no apply worker any more');
# writes after the removal stay in their region
api($east, 'PutItem', '{"TableName":"Rep","Item":{"pk":{"S":"after"},"sk":{"N":"1"},"g":{"S":"g"},"l":{"N":"1"}}}');

# == re-add: the copy again ==
api($east, 'UpdateTable', '{"TableName":"Rep","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}');
ok(wait_state($east, 'Rep', 'ACTIVE eu-west-1:ACTIVE'), 're-added: the replica turns ACTIVE');
ok(tables_converged([ $east, $west ], 'Rep', 120), 're-added: every item is the same on both sides');
is(indexes_verify($west, 'Rep'), '0', 're-added: the indexes of eu-west-1 verify');

# == a Create interrupted by SIGKILL of us-east-1 during the copy ==
api($east, 'CreateTable', '{"TableName":"Big","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}');
$east->safe_psql('postgres', q{SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Big', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'b' || i), 'sk', jsonb_build_object('N', (i % 3)::text), 'g', jsonb_build_object('S', 'g' || (i % 11)),
  'pad', jsonb_build_object('S', repeat('x', 200))))) FROM generate_series(1, 30000) i});
api($east, 'UpdateTable', '{"TableName":"Big","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}');
ok($west->poll_query_until('postgres', q{SELECT EXISTS (SELECT FROM dynindex.tables WHERE table_name = 'Big')
  AND (SELECT count(*) FROM dynindex.read_all('Scan', '{"TableName":"Big","Select":"COUNT"}')) >= 0}),
	'the copy of Big has begun');
my $copied = 0;
for (1 .. 600)
{
	$copied = $west->safe_psql('postgres', q{SELECT (dynindex.api('Scan', '{"TableName":"Big","Select":"COUNT"}')->>'ScannedCount')::int});
	last if $copied > 0;
	usleep(50_000);
}
my $state = replica_state($east, 'Big');
note("items copied when us-east-1 is killed: $copied (of 30000), $state");
ok(crash_node($east), 'SIGKILL of us-east-1 during the copy');
$east->start;
ok(wait_state($east, 'Big', 'ACTIVE eu-west-1:ACTIVE', 300), 'after the restart the creation finishes: ACTIVE');
ok(tables_converged([ $east, $west ], 'Big', 120), 'every item of Big is on eu-west-1');
is(indexes_verify($west, 'Big'), '0', 'the GSI of Big on eu-west-1 verifies');
ok(tables_converged([ $east, $west ], 'Rep', 60), 'Rep is still the same on both sides');

done_testing();
