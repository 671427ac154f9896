# Crash safety of a GSI backfill: UpdateTable Create on a table of 50,000
# items, kill -9 the postmaster in the middle of the backfill, check after
# recovery (with the worker not loaded) that the index is still CREATING with
# a stored position, then load the worker again: the backfill resumes from
# that position, finishes, and the index verifies clean.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use Time::HiRes qw(usleep);

my $ITEMS = 50000;

my $node = PostgreSQL::Test::Cluster->new('gsi_backfill_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nfsync = on\nlog_statement = none\n");
$node->append_conf('postgresql.conf', "dynindex.backfill_chunk_size = 200\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Big","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"BillingMode":"PAY_PER_REQUEST"}')});
$node->safe_psql('postgres', qq{SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Big', 'Item', jsonb_build_object(
	'pk', jsonb_build_object('S', 'p' || (i % 997)), 'sk', jsonb_build_object('N', i::text),
	'cat', jsonb_build_object('S', 'c' || (i % 13)), 'v', jsonb_build_object('N', (i % 101 - 50)::text)))))
  FROM generate_series(1, $ITEMS) i});

$node->safe_psql('postgres', q{SELECT dynindex.api('UpdateTable', '{"TableName":"Big","AttributeDefinitions":[{"AttributeName":"cat","AttributeType":"S"},{"AttributeName":"v","AttributeType":"N"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byCat","KeySchema":[{"AttributeName":"cat","KeyType":"HASH"},{"AttributeName":"v","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}')});

# wait until the backfill has stored a position, then crash
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while ($node->safe_psql('postgres', q{SELECT backfill_pk IS NOT NULL FROM dynindex.indexes WHERE index_name = 'byCat'}) ne 't')
{
	BAIL_OUT('the backfill did not start') if time > $deadline;
	usleep(20_000);
}
# The worker commits with synchronous_commit = off (a lost chunk is only redone),
# so the position seen may not be on disk yet.  Wait until the WAL is flushed
# past where it was inserted up to now (the WAL writer does it within
# wal_writer_delay): from here the position is durable, and the crash tests that
# it is used.  (A transaction that only takes an xid, as SELECT txid_current()
# does, writes no WAL of its own and commits asynchronously: it flushes nothing.)
my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->poll_query_until('postgres', "SELECT pg_current_wal_flush_lsn() >= '$lsn'::pg_lsn")
  or BAIL_OUT('the WAL was not flushed');
ok(crash_node($node), 'postmaster and backends are gone');

# recovery without the worker: the backfill state survived the crash
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->start;
my ($status, $has_pos) = split /\|/, $node->safe_psql('postgres',
	q{SELECT status, backfill_pk IS NOT NULL FROM dynindex.indexes WHERE index_name = 'byCat'});
is($status, 'CREATING', 'index still CREATING after the crash');
is($has_pos, 't', 'backfill position kept in the catalog');
my $storage = $node->safe_psql('postgres', q{SELECT storage FROM dynindex.indexes WHERE index_name = 'byCat'});
my $done = $node->safe_psql('postgres', "SELECT count(*) FROM $storage");
note("entries indexed before the crash: $done of $ITEMS");
ok($done > 0 && $done < $ITEMS, 'the crash hit the middle of the backfill');
my $qerr = '';
$node->psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Big","IndexName":"byCat","KeyConditionExpression":"cat = :c","ExpressionAttributeValues":{":c":{"S":"c1"}}}')}, stderr => \$qerr);
like($qerr, qr/Cannot read from backfilling global secondary index: byCat/, 'reads refused while backfilling');
$node->stop;

# the worker again: the backfill resumes and finishes
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
my $pos_after = $node->safe_psql('postgres', q{SELECT backfill_pk IS NOT NULL OR status = 'ACTIVE' FROM dynindex.indexes WHERE index_name = 'byCat'});
is($pos_after, 't', 'position (or completion) after restart');
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Big', '180 seconds')}), 't', 'backfill finished after restart');
is($node->safe_psql('postgres', q{SELECT status || ' ' || backfilling || ' ' || (backfill_pk IS NULL) FROM dynindex.indexes WHERE index_name = 'byCat'}),
	'ACTIVE false true', 'index ACTIVE, position cleared');
is($node->safe_psql('postgres', "SELECT count(*) FROM $storage"), $ITEMS, 'every item indexed');
is($node->safe_psql('postgres', q{SELECT format('%s %s %s %s', index_name, missing, extra, stale) FROM dynindex.verify_indexes('Big')}),
	'byCat 0 0 0', 'the index verifies clean');
is($node->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Big","IndexName":"byCat","Select":"COUNT","KeyConditionExpression":"cat = :c","ExpressionAttributeValues":{":c":{"S":"c1"}}}') ->> 'Count'}),
	int(($ITEMS - 1) / 13) + 1, 'a Query on the index counts right');
$node->stop;
done_testing();
