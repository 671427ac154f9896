# A Citus write whose worker fails between PREPARE and COMMIT PREPARED: the
# coordinator's transaction (with the GSI change and the 2PC record) has
# committed, the worker's part is a prepared transaction that only Citus's
# recovery will commit.  The GSI worker must not read the item before that:
# it would apply the item's old state, and the index would keep an entry the
# table no longer has.  The moment is made deterministic by preparing the
# worker's part by hand (as Citus does, with a Citus gid and its record in
# pg_dist_transaction); Citus's own periodic recovery is off, so only the GSI
# worker can commit it.  Also shows that a write recording a GSI change or a
# stream record or a ClientRequestToken commits with two-phase commit, and one
# recording nothing on the coordinator does not; and how a cluster distributed
# before the commit marker existed gets it.  Skipped when Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynCitus;

my $skip = citus_skip_reason();
plan skip_all => $skip if $skip;

my @nodes = citus_cluster([ 'worker' ],
	"max_prepared_transactions = 20",
	"citus.shard_count = 2",
	"citus.recover_2pc_interval = -1");    # no periodic recovery: only the GSI worker's
my ($coord, $w) = @nodes;

sub api
{
	my ($op, $json) = @_;
	return $coord->safe_psql('postgres', "SELECT dynindex.api('$op', '$json')");
}
api('CreateTable', '{"TableName":"Orders","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"st","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"bySt","KeySchema":[{"AttributeName":"st","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}');
api('CreateTable', '{"TableName":"Plain","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}');
api('CreateTable', '{"TableName":"Streamed","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
  "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"KEYS_ONLY"}}');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex_data.%'}),
	'4', 'the tables and the GSI are distributed');

# Which commit protocol a write uses, from the commands Citus sends (its
# periodic recovery and the GSI worker's may delete pg_dist_transaction rows
# at any moment, so counting them would race).
sub prepares
{
	my ($op, $json) = @_;
	my ($ret, $out, $err) = $coord->psql('postgres',
		"SET citus.log_remote_commands = on; SET client_min_messages = log; SELECT dynindex.api('$op', '$json')");
	die "$op failed: $err" if $ret != 0;
	return $err =~ /PREPARE TRANSACTION/ ? 'two-phase' : 'one-phase';
}
is(prepares('PutItem', '{"TableName":"Plain","Item":{"pk":{"S":"p1"}}}'), 'one-phase',
	'a write that records nothing on the coordinator commits in one phase');
is(prepares('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"a"},"st":{"S":"open"}}}'), 'two-phase',
	'a write queueing a GSI change commits with two-phase commit');
is(prepares('PutItem', '{"TableName":"Streamed","Item":{"pk":{"S":"s1"}}}'), 'two-phase',
	'a write recording a stream record commits with two-phase commit');
is(prepares('TransactWriteItems', '{"ClientRequestToken":"tok1","TransactItems":[{"Put":{"TableName":"Plain","Item":{"pk":{"S":"p2"}}}}]}'),
	'two-phase', 'a transaction recording its ClientRequestToken commits with two-phase commit');
# how: the write also updates the commit marker, a Citus local table on the coordinator
is($coord->safe_psql('postgres', q{SELECT p.partmethod::text || ' ' || pl.groupid FROM pg_dist_partition p
  JOIN pg_dist_shard s USING (logicalrelid) JOIN pg_dist_placement pl USING (shardid)
  WHERE p.logicalrelid = 'dynindex.citus_commit'::regclass}), 'n 0', 'the commit marker is a Citus local table on the coordinator');
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't', 'the GSI caught up');

my $count_open = sub {
	$coord->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"bySt",
	  "KeyConditionExpression":"st = :s","ExpressionAttributeValues":{":s":{"S":"open"}},"Select":"COUNT"}') ->> 'Count'});
};
is($count_open->(), '1', 'the GSI has the item');

# Where item "a" is stored: its shard on the worker, the worker's group, its key.
my $storage = $coord->safe_psql('postgres', q{SELECT storage FROM dynindex.tables WHERE table_name = 'Orders'});
my ($pkhex, $skhex) = split /\|/, $coord->safe_psql('postgres', "SELECT encode(pk, 'hex') || '|' || encode(sk, 'hex') FROM $storage");
$skhex //= '';
my $shard = $coord->safe_psql('postgres',
	"SELECT shard_name('$storage'::regclass, get_shard_id_for_distribution_column('$storage', '\\x$pkhex'::bytea))");
my $group = $coord->safe_psql('postgres', 'SELECT groupid FROM pg_dist_node WHERE nodeport = ' . $w->port);
my $num = $coord->safe_psql('postgres', q{SELECT num FROM dynindex.tables WHERE table_name = 'Orders'});

# A DeleteItem of "a" as Citus runs it, stopped after PREPARE: the worker's
# part prepared, the coordinator's transaction (GSI change + 2PC record)
# committed.
sub in_doubt_delete
{
	my ($gid) = @_;
	$w->safe_psql('postgres', "BEGIN; DELETE FROM $shard WHERE pk = '\\x$pkhex'::bytea; PREPARE TRANSACTION '$gid'");
	$coord->safe_psql('postgres', "BEGIN;
	  INSERT INTO pg_dist_transaction (groupid, gid) VALUES ($group, '$gid');
	  INSERT INTO dynindex.gsi_changes (table_num, pk, sk) VALUES ($num, '\\x$pkhex'::bytea, '\\x$skhex'::bytea);
	  COMMIT");
}

# 1. The worker is up: the GSI worker commits the prepared part (Citus's
#    recovery) before it reads the item, and removes the entry.
in_doubt_delete('citus_0_424242_1_1');
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't', 'the change was applied');
is($w->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '0', "the GSI worker committed the worker's prepared part");
# Citus's periodic recovery would run now (a no-op if the GSI worker did it)
$coord->safe_psql('postgres', 'SELECT recover_prepared_transactions()');
is($coord->safe_psql('postgres', "SELECT count(*) FROM $storage"), '0', 'the item is deleted');
is($count_open->(), '0', 'the GSI entry is gone with it');
is($coord->safe_psql('postgres', q{SELECT index_name || ' ' || missing || ' ' || extra || ' ' || stale FROM dynindex.verify_indexes('Orders')}),
	'bySt 0 0 0', '0 index discrepancies');

# 2. The worker is down when the change is queued: the change waits (it is
#    neither applied nor lost) and is applied once the worker is back.
api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"a"},"st":{"S":"open"}}}');
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't', 'the GSI caught up');
is($count_open->(), '1', 'the GSI has the item again');
$w->safe_psql('postgres', "BEGIN; DELETE FROM $shard WHERE pk = '\\x$pkhex'::bytea; PREPARE TRANSACTION 'citus_0_424242_2_1'");
$w->stop('immediate');
$coord->safe_psql('postgres', "BEGIN;
  INSERT INTO pg_dist_transaction (groupid, gid) VALUES ($group, 'citus_0_424242_2_1');
  INSERT INTO dynindex.gsi_changes (table_num, pk, sk) VALUES ($num, '\\x$pkhex'::bytea, '\\x$skhex'::bytea);
  COMMIT");
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '3 seconds')}), 'f',
	'while the worker is down the change stays queued');
$w->start;
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't', 'applied once the worker is back');
is($w->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '0', "the GSI worker committed the worker's prepared part");
$coord->safe_psql('postgres', 'SELECT recover_prepared_transactions()');
is($coord->safe_psql('postgres', "SELECT count(*) FROM $storage"), '0', 'the item is deleted');
is($count_open->(), '0', 'the GSI entry is gone with it');
is($coord->safe_psql('postgres', q{SELECT index_name || ' ' || missing || ' ' || extra || ' ' || stale FROM dynindex.verify_indexes('Orders')}),
	'bySt 0 0 0', '0 index discrepancies');

# 3. A cluster whose tables were distributed before the commit marker existed
#    (dynindex 0.2): writes warn and commit in one phase until distribute_table
#    registers the marker.
$coord->safe_psql('postgres', q{SELECT undistribute_table('dynindex.citus_commit')});
my (undef, undef, $err) = $coord->psql('postgres', q{SET citus.log_remote_commands = on; SET client_min_messages = log;
  SELECT dynindex.api('PutItem', '{"TableName":"Streamed","Item":{"pk":{"S":"s2"}}}')});
like($err, qr/WARNING:  dynindex: distributed tables but no commit marker/, 'without the marker a write with records warns');
unlike($err, qr/PREPARE TRANSACTION/, '... and commits in one phase');
is($coord->safe_psql('postgres', q{SELECT dynindex.distribute_table('Streamed')}), '0',
	'distribute_table on a distributed table distributes nothing');
is(prepares('PutItem', '{"TableName":"Streamed","Item":{"pk":{"S":"s3"}}}'), 'two-phase',
	'but registers the marker: writes commit with two-phase commit again');

$_->stop for reverse @nodes;
done_testing();
