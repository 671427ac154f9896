# Global tables: a region lost for good (docs/global-tables.md, Repair).  Its
# server is gone, so a ReplicaUpdates Delete cannot reach it; the server that
# remains forgets it with dynindex.forget_region (the replicas of its tables,
# its slot, its apply worker and how far that had applied), then a new server
# of the same region is added as a replica again: the table is copied to it and
# its own changes come back — from the start of its new slot, although the old
# server's WAL positions were far ahead of the new one's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGlobal;

my ($east, $west) = global_pair('');

api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"e"},"sk":{"N":"1"},"g":{"S":"x"}}}');
# the old eu-west-1 is far ahead in its WAL (3 segments) when us-east-1 applies its last change
$west->safe_psql('postgres', 'SELECT pg_switch_wal(); CREATE TABLE filler AS SELECT 1 AS a; SELECT pg_switch_wal(); DROP TABLE filler; SELECT pg_switch_wal()');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"w"},"sk":{"N":"1"},"g":{"S":"x"}}}');
ok(converged($east, $west), 'the two regions hold the same items');
my $old_lsn = $west->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');

# eu-west-1 is lost; us-east-1 goes on writing
$west->stop('immediate');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"e"},"sk":{"N":"2"},"g":{"S":"x"}}}');

my ($rc, $out, $err) = $east->psql('postgres', q{SELECT dynindex.drop_region('eu-west-1')});
like($err, qr/region "eu-west-1" has replicas of tables/, 'a region with replicas cannot be dropped');
($rc, $out, $err) = $east->psql('postgres', q{SELECT dynindex.forget_region('us-east-1')});
like($err, qr/region "us-east-1" is this server's own region/, 'this server\'s own region cannot be forgotten');
is($east->safe_psql('postgres', q{SELECT dynindex.forget_region('eu-west-1')}), '1', 'forget_region forgets the one replica');
is($east->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table' ? 'Replicas'}),
	'f', 'the table has no replica any more');
is($east->safe_psql('postgres', q{SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'dynindex_eu_west_1'}),
	'0', 'the slot for eu-west-1 is dropped (it would hold WAL for ever)');
ok($east->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dynindex apply'}),
	'the apply worker of eu-west-1 stops');
ok($east->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_replication_origin WHERE roname = 'dynindex_eu-west-1'}),
	'it forgets how far it had applied');
is($east->safe_psql('postgres', q{SELECT dynindex.drop_region('eu-west-1')}), 't', 'then the region can be dropped');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"e"},"sk":{"N":"3"},"g":{"S":"x"}}}');
is($east->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"e"},"sk":{"N":"3"}}}') ? 'Item'}),
	't', 'us-east-1 takes writes alone');

# a new server for eu-west-1, its WAL far behind the old one's
my $west2 = region_node('west2', 'eu-west-1');
api($west2, 'DeleteTable', '{"TableName":"Glob"}');
ok($west2->safe_psql('postgres', qq{SELECT pg_current_wal_lsn() < '$old_lsn'::pg_lsn}) eq 't', 'the new server\'s WAL is behind the old one\'s');
DynGlobal::declare($east, 'eu-west-1', $west2);
DynGlobal::declare($west2, 'us-east-1', $east);
api($east, 'UpdateTable', '{"TableName":"Glob","ReplicaUpdates":[{"Create":{"RegionName":"eu-west-1"}}]}');
ok($east->poll_query_until('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table'->'Replicas'->0->>'ReplicaStatus' = 'ACTIVE'}),
	'the new replica in eu-west-1 turns ACTIVE');
ok(converged($east, $west2), 'the table is copied to the new server');
api($west2, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"w2"},"sk":{"N":"1"},"g":{"S":"x"}}}');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"e"},"sk":{"N":"4"},"g":{"S":"x"}}}');
ok(converged($east, $west2), 'the new server\'s changes reach us-east-1 (from the start of its new slot), and back');
is($east->safe_psql('postgres', q{SELECT count(*) FROM dynindex.read_all('Scan', '{"TableName":"Glob","ConsistentRead":true}')}),
	'6', 'every item is there once');
for my $n ($east, $west2)
{
	$n->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Glob')});
	is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Glob') WHERE missing + extra + stale > 0}),
		'0', $n->name . ': the GSI verifies');
}

done_testing();
