# Global tables, the replication core between two dynindex servers (regions
# us-east-1 and eu-west-1; docs/global-tables.md): a table replicated both
# ways gets every committed change of the other side exactly once, through
# the write path (its GSI and its stream follow; transactions and PartiQL
# too), never sent back to where
# it came from; concurrent writes of one item settle on the same winner on
# both sides (last writer wins on (stamp, region)); deletes replicate; an
# apply worker killed with the server (immediate stop) resumes where it was.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynGlobal;

my ($east, $west) = global_pair('');

# DescribeTable: a global table of version 2019.11.21, its other region ACTIVE
is($east->safe_psql('postgres', q{SELECT d->>'GlobalTableVersion' || ' ' || (d->'Replicas')::text
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table' AS d) s}),
	'2019.11.21 [{"RegionName": "eu-west-1", "ReplicaStatus": "ACTIVE"}]', 'DescribeTable in us-east-1 shows the replica in eu-west-1');
is($west->safe_psql('postgres', q{SELECT (dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table'->'Replicas')::text}),
	'[{"RegionName": "us-east-1", "ReplicaStatus": "ACTIVE"}]', 'DescribeTable in eu-west-1 shows the replica in us-east-1');
my ($rc, $out, $err) = $east->psql('postgres', q{SELECT dynindex.api('UpdateTable', '{"TableName":"Glob","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}')});
like($err, qr/ValidationException: Failed to create a the new replica of table with name: \S+Glob\S+ because one or more replicas already existed as tables\./,
	'ReplicaUpdates Create of a region the table is replicated with: DynamoDB\'s message');

# writes on both sides
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"a"},"sk":{"N":"1"},"g":{"S":"x"},"v":{"S":"from east"}}}');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"b"},"sk":{"N":"1"},"g":{"S":"x"},"v":{"S":"from west"}}}');
api($east, 'UpdateItem', '{"TableName":"Glob","Key":{"pk":{"S":"a"},"sk":{"N":"1"}},"UpdateExpression":"SET n = :n","ExpressionAttributeValues":{":n":{"N":"7"}}}');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"d"},"sk":{"N":"1"},"v":{"S":"to delete"}}}');
ok(converged($east, $west), 'puts and an update of both sides reach the other');
api($east, 'DeleteItem', '{"TableName":"Glob","Key":{"pk":{"S":"d"},"sk":{"N":"1"}}}');
ok(converged($east, $west), 'a delete of the other side reaches the writer of the item');
is($west->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"d"},"sk":{"N":"1"}},"ConsistentRead":true}') ? 'Item'}),
	'f', 'the deleted item is gone in eu-west-1');
is($west->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"a"},"sk":{"N":"1"}}}')->'Item'->'n'->>'N'}),
	'7', 'the update made in us-east-1 is in eu-west-1');

# a transaction and a PartiQL statement replicate like any write (the one write path)
api($east, 'TransactWriteItems', '{"TransactItems":[{"Put":{"TableName":"Glob","Item":{"pk":{"S":"t"},"sk":{"N":"1"},"v":{"S":"txn"}}}},'
	. '{"Update":{"TableName":"Glob","Key":{"pk":{"S":"t"},"sk":{"N":"2"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":"txn"}}}}]}');
$west->safe_psql('postgres', q{SELECT * FROM dynindex.partiql('INSERT INTO "Glob" VALUE {''pk'': ''q'', ''sk'': 1, ''v'': ''partiql''}')});
ok(converged($east, $west), 'a transaction and a PartiQL INSERT reach the other region');
is($west->safe_psql('postgres', q{SELECT count(*) FROM dynindex.read_all('Query', '{"TableName":"Glob","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"t"}}}') i WHERE i->'v'->>'S' = 'txn'}),
	'2', 'both items of the transaction are in eu-west-1');
is($east->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"q"},"sk":{"N":"1"}}}')->'Item'->'v'->>'S'}),
	'partiql', 'the PartiQL INSERT of eu-west-1 is in us-east-1');

# a transaction whose changes take more than one write of the output plugin (its lines are
# written every 64 kB): 100 items of 4 kB, all applied in the other region, in one transaction
api($east, 'TransactWriteItems', '{"TransactItems":[' . join(',', map {
	qq({"Put":{"TableName":"Glob","Item":{"pk":{"S":"big"},"sk":{"N":"$_"},"v":{"S":") . ('x' x 4000) . qq("}}}})
} 1 .. 100) . ']}');
ok(converged($east, $west), 'a transaction of 400 kB of changes reaches the other region');
is($west->safe_psql('postgres', q{SELECT count(*) || ' ' || sum(length(i->'v'->>'S')) FROM dynindex.read_all('Query', '{"TableName":"Glob","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"big"}}}') i}),
	'100 400000', 'every item of the large transaction is in eu-west-1, whole');
my $storage = $west->safe_psql('postgres', q{SELECT storage FROM dynindex.tables WHERE table_name = 'Glob'});
is($west->safe_psql('postgres', qq{SELECT count(DISTINCT xmin::text) FROM $storage WHERE item->'pk'->>'S' = 'big'}),
	'1', 'and applied there in one transaction');

# a replicated write goes through the write path: the GSI and the stream of the receiving side
$west->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Glob')});
is($west->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Glob","IndexName":"byG","KeyConditionExpression":"g = :g","Select":"COUNT","ExpressionAttributeValues":{":g":{"S":"x"}}}')->>'Count'}),
	'2', 'the GSI of eu-west-1 has the item written in us-east-1');
is($west->safe_psql('postgres', q{SELECT string_agg(event_name, ' ' ORDER BY sequence_number) FROM dynindex.stream_changes('Glob') WHERE keys->'pk'->>'S' = 'a'}),
	'INSERT MODIFY', 'the stream of eu-west-1 shows the replicated insert and update');

# nothing comes back: each side's stream has each change of 'a' once, and stays so
usleep(1_500_000);
is($east->safe_psql('postgres', q{SELECT string_agg(event_name, ' ' ORDER BY sequence_number) FROM dynindex.stream_changes('Glob') WHERE keys->'pk'->>'S' = 'a'}),
	'INSERT MODIFY', 'the writer of a change does not get it back (one record per change)');
is($east->safe_psql('postgres', q{SELECT count(*) FROM dynindex.stream_changes('Glob') WHERE keys->'pk'->>'S' = 'b'}),
	'1', 'a change applied from the other region is not sent back');

# concurrent writes of one item: both sides settle on the same item
for my $i (1 .. 20)
{
	api($east, 'PutItem', qq{{"TableName":"Glob","Item":{"pk":{"S":"c"},"sk":{"N":"$i"},"v":{"S":"east"}}}});
	api($west, 'PutItem', qq{{"TableName":"Glob","Item":{"pk":{"S":"c"},"sk":{"N":"$i"},"v":{"S":"west"}}}});
}
ok(converged($east, $west), 'concurrent writes of the same items: both regions hold the same winners');
# the later write wins: west wrote each item after east did (on the same host clock)
is($east->safe_psql('postgres', q{SELECT count(*) FROM jsonb_array_elements(dynindex.api('Query', '{"TableName":"Glob","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"c"}},"ConsistentRead":true}')->'Items') i WHERE i->'v'->>'S' = 'west'}),
	'20', 'last writer wins: every item holds the later write');

# an immediate stop of eu-west-1 while us-east-1 writes: it resumes, exactly once
$west->stop('immediate');
for my $i (1 .. 50)
{
	api($east, 'PutItem', qq{{"TableName":"Glob","Item":{"pk":{"S":"k"},"sk":{"N":"$i"},"v":{"S":"while west was down"}}}});
}
api($east, 'UpdateItem', '{"TableName":"Glob","Key":{"pk":{"S":"a"},"sk":{"N":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}');
$west->start;
ok(converged($east, $west), 'eu-west-1 back after an immediate stop: it gets what was written meanwhile');
is($west->safe_psql('postgres', q{SELECT count(*) FROM dynindex.stream_changes('Glob') WHERE keys->'pk'->>'S' = 'k'}),
	'50', 'each change applied once (one stream record per change)');
is($west->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"a"},"sk":{"N":"1"}}}')->'Item'->'n'->>'N'}),
	'8', 'the update made while it was down is there once');
# the lag per region: each side's slot for the other streams and is confirmed; each applied the other's changes
for my $n ($east, $west)
{
	ok($n->poll_query_until('postgres', q{SELECT streaming AND pending_bytes < 65536 AND applied_lsn IS NOT NULL
	  FROM dynindex.replication_status()}), $n->name . ': replication_status shows the other region caught up');
	# ReplicationLatency: bounds only (no timing that can flake)
	is($n->safe_psql('postgres', q{SELECT applied_changes > 0 AND replication_latency_ms >= 0 AND replication_latency_ms < 60000
	  AND replication_latency_avg_ms >= 0 AND replication_latency_avg_ms < 60000 AND last_applied_at IS NOT NULL
	  AND last_applied_at <= now() FROM dynindex.replication_status()}),
		't', $n->name . ': replication_status shows the latency of the changes applied from the other region');
}
is($west->safe_psql('postgres', q{SELECT count(*) FROM (SELECT * FROM dynindex.verify_indexes('Glob')) v WHERE missing + extra + stale > 0}),
	'0', 'the GSI of eu-west-1 verifies');

done_testing();
