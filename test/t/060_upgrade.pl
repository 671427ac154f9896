# Versions and upgrades (docs/versions.md):
#  1. a database created at version 0.1, with tables, LSIs, GSIs, tags, TTL and
#     items, is upgraded with ALTER EXTENSION dynindex UPDATE; its data and
#     indexes are intact (Query, verify_indexes, new writes reach the indexes)
#     and every 0.2 feature works on it (@FEATURES below: add yours); the same
#     for a database created at 0.2 with a stream and a backup in use, and
#     every 0.3 feature works on both (@FEATURES_03);
#  2. pg_dump of the 0.1 database restores into a database at the default
#     version, with the same tables and indexes;
#  3. for every (source, target) pair with an update path, installing the target
#     directly (CREATE EXTENSION ... VERSION target) and installing the source
#     and updating to the target give the same catalogs: every member object of
#     the extension, function signatures and bodies, columns, defaults,
#     constraints, indexes, triggers, views, grants, initial privileges,
#     comments and the pg_dump configuration.  Any difference fails the test
#     (and with it `make test`).  The comparison is shown to catch each kind of
#     difference on a deliberately altered database.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use Digest::SHA qw(sha256_hex);

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;

# dynindex.api on database $db; returns the decoded response.
sub api
{
	my ($db, $op, $req) = @_;
	my $json = ref $req ? encode_json($req) : $req;
	$json =~ s/'/''/g;
	return decode_json($node->safe_psql($db, "SELECT dynindex.api('$op', '$json')"));
}

# dynindex.api expected to fail; returns the error message.
sub api_error
{
	my ($db, $op, $req) = @_;
	my $json = encode_json($req);
	$json =~ s/'/''/g;
	my ($ret, $out, $err) = $node->psql($db, "SELECT dynindex.api('$op', '$json')");
	return $ret == 0 ? '(no error)' : $err;
}

my $default = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'dynindex'});
note("default version: $default");

# Released scripts never change (docs/versions.md): their SHA-256 as released.
# A release adds the line of its upgrade script here.
my %RELEASED = (
	'dynindex--0.1.sql' => 'faec804b9e1d9b372994588c862b10187e2e0d9285c7d6eea740ce460ec3564c',
	'dynindex--0.1--0.2.sql' => 'df9e2a24b0b13c4f18eaa827b66f6c90227d235562e9636de326c7e6e1b0366a',
);
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
for my $script (sort keys %RELEASED)
{
	for my $dir ("sql", "$sharedir/extension")    # prove runs in the tree (cd $(srcdir))
	{
		is(sha256_hex(slurp_file("$dir/$script")), $RELEASED{$script},
			"$dir/$script is byte for byte the released script");
	}
}

# ---------------------------------------------------------------------------
# 1. A 0.1 database with data, upgraded in place.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION dynindex VERSION '0.1'});
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'dynindex'}),
	'0.1', 'installed at version 0.1');

# The tables and items both upgrade paths start from.
sub make_data
{
	my ($db) = @_;
	api($db, 'CreateTable', {
		TableName => 'Orders', BillingMode => 'PAY_PER_REQUEST',
		AttributeDefinitions => [ map { { AttributeName => $_, AttributeType => 'S' } } qw(pk sk st cust) ],
		KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' }, { AttributeName => 'sk', KeyType => 'RANGE' } ],
		LocalSecondaryIndexes => [ { IndexName => 'byStatus',
			KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' }, { AttributeName => 'st', KeyType => 'RANGE' } ],
			Projection => { ProjectionType => 'ALL' } } ],
		GlobalSecondaryIndexes => [ { IndexName => 'byCust',
			KeySchema => [ { AttributeName => 'cust', KeyType => 'HASH' }, { AttributeName => 'sk', KeyType => 'RANGE' } ],
			Projection => { ProjectionType => 'KEYS_ONLY' } } ],
		Tags => [ { Key => 'team', Value => 'orders' } ] });
	api($db, 'UpdateTimeToLive', { TableName => 'Orders',
		TimeToLiveSpecification => { Enabled => JSON::PP::true, AttributeName => 'expires' } });
	api($db, 'CreateTable', {
		TableName => 'Counters', BillingMode => 'PROVISIONED',
		ProvisionedThroughput => { ReadCapacityUnits => 5, WriteCapacityUnits => 5 },
		AttributeDefinitions => [ { AttributeName => 'id', AttributeType => 'N' } ],
		KeySchema => [ { AttributeName => 'id', KeyType => 'HASH' } ] });
	for my $i (1 .. 40)
	{
		api($db, 'PutItem', { TableName => 'Orders', Item => {
			pk => { S => 'u' . ($i % 4) }, sk => { S => sprintf('o%03d', $i) },
			st => { S => $i % 2 ? 'open' : 'done' }, cust => { S => 'c' . ($i % 5) },
			total => { N => "$i.50" } } });
		api($db, 'UpdateItem', { TableName => 'Counters', Key => { id => { N => '' . ($i % 3) } },
			UpdateExpression => 'ADD n :one', ExpressionAttributeValues => { ':one' => { N => '1' } } });
	}
}

make_data('old');
is($node->safe_psql('old', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't',
	'0.1: GSI caught up');
# ... really applied: the worker claims a 0.1 queue (no writer, no first_id column)
is(api('old', 'Query', { TableName => 'Orders', IndexName => 'byCust',
	KeyConditionExpression => 'cust = :c AND begins_with(sk, :o)',
	ExpressionAttributeValues => { ':c' => { S => 'c0' }, ':o' => { S => 'o0' } } })->{Count}, 8,
	'0.1 schema, 0.2 library: the GSI holds the items');

# Before the update the new library serves the 0.1 schema: a table is created
# and deleted, and a 0.2 feature asks for the update.
api('old', 'CreateTable', { TableName => 'Scratch', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'id', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'id', KeyType => 'HASH' } ] });
is(api('old', 'DeleteTable', { TableName => 'Scratch' })->{TableDescription}{TableName}, 'Scratch',
	'0.1 schema, 0.2 library: DeleteTable');
like(api_error('old', 'UpdateTable', { TableName => 'Counters',
	StreamSpecification => { StreamEnabled => JSON::PP::true, StreamViewType => 'KEYS_ONLY' } }),
	qr/dynindex streams need version 0\.2 of the extension in this database.*HINT:  Run ALTER EXTENSION dynindex UPDATE\./s,
	'0.1 schema, 0.2 library: enabling a stream asks for ALTER EXTENSION dynindex UPDATE');

# pg_dump of the 0.1 database, restored further below.
my $dump = $node->basedir . '/old-0.1.sql';
command_ok([ 'pg_dump', '-d', $node->connstr('old'), '-f', $dump ], 'pg_dump of the 0.1 database');

# Changes queued while the database is still at 0.1 are applied after the update.
api('old', 'PutItem', { TableName => 'Orders', Item => {
	pk => { S => 'u9' }, sk => { S => 'o900' }, st => { S => 'open' }, cust => { S => 'c9' } } });

$node->safe_psql('old', 'ALTER EXTENSION dynindex UPDATE');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'dynindex'}),
	$default, "ALTER EXTENSION dynindex UPDATE goes to the default version $default");

# The btrees of each index relation of Orders ("pkey", "unique" and the key).
sub index_btrees
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SELECT string_agg(x.index_name || ' ' || (
		         SELECT string_agg(b, ' + ' ORDER BY b COLLATE "C") FROM (
		           SELECT CASE WHEN i.indisprimary THEN 'pkey ' WHEN i.indisunique THEN 'unique ' ELSE '' END
		                  || regexp_replace(pg_get_indexdef(i.indexrelid), '.* USING btree ', '') AS b
		             FROM pg_index i WHERE i.indrelid = x.storage::regclass) bs), ', ' ORDER BY x.index_name)
		  FROM dynindex.indexes x WHERE x.table_name = 'Orders'});
}
# Since 0.3 an index relation has one unique btree on its key, dynindex.index_key.
my $KEYED = 'byCust (dynindex.key_hash((pk || sk))) + unique (dynindex.index_key(ipk, isk, pk, sk)), '
  . 'byStatus unique (dynindex.index_key(ipk, isk, pk, sk))';
is(index_btrees('old'), $KEYED,
	'0.1 -> update: each index relation\'s primary key and segment index became one unique btree');

# The data and indexes of a database as it was at 0.1 (also used after the restore).
sub check_data
{
	my ($db, $what, $items) = @_;
	is_deeply([ sort @{ api($db, 'ListTables', {})->{TableNames} } ], [ 'Counters', 'Orders' ],
		"$what: ListTables");
	my $q = api($db, 'Query', { TableName => 'Orders', KeyConditionExpression => 'pk = :p',
		ExpressionAttributeValues => { ':p' => { S => 'u1' } } });
	is($q->{Count}, 10, "$what: Query on the table");
	is($q->{Items}[0]{total}{N}, '1.5', "$what: item content");
	$q = api($db, 'Query', { TableName => 'Orders', IndexName => 'byStatus',
		KeyConditionExpression => 'pk = :p AND st = :s',
		ExpressionAttributeValues => { ':p' => { S => 'u1' }, ':s' => { S => 'open' } } });
	is($q->{Count}, 10, "$what: Query on the LSI");
	is($node->safe_psql($db, q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't',
		"$what: the GSI worker runs");
	$q = api($db, 'Query', { TableName => 'Orders', IndexName => 'byCust',
		KeyConditionExpression => 'cust = :c AND begins_with(sk, :o)',
		ExpressionAttributeValues => { ':c' => { S => 'c0' }, ':o' => { S => 'o0' } } });
	is($q->{Count}, 8, "$what: Query on the GSI");
	is(api($db, 'GetItem', { TableName => 'Counters', Key => { id => { N => '1' } } })->{Item}{n}{N},
		'14', "$what: GetItem on the second table");
	my $d = api($db, 'DescribeTable', { TableName => 'Orders' })->{Table};
	is_deeply([ map { $_->{IndexName} } @{ $d->{LocalSecondaryIndexes} } ], ['byStatus'], "$what: DescribeTable LSIs");
	is($d->{GlobalSecondaryIndexes}[0]{IndexStatus}, 'ACTIVE', "$what: GSI ACTIVE");
	is(api($db, 'ListTagsOfResource', { ResourceArn => $d->{TableArn} })->{Tags}[0]{Value}, 'orders',
		"$what: tags");
	is(api($db, 'DescribeTimeToLive', { TableName => 'Orders' })->{TimeToLiveDescription}{AttributeName},
		'expires', "$what: TTL setting");

	# Writes keep the indexes right.
	api($db, 'PutItem', { TableName => 'Orders', Item => {
		pk => { S => 'u1' }, sk => { S => 'o999' }, st => { S => 'open' }, cust => { S => 'c0' } } });
	api($db, 'DeleteItem', { TableName => 'Orders', Key => { pk => { S => 'u1' }, sk => { S => 'o001' } } });
	api($db, 'UpdateItem', { TableName => 'Orders', Key => { pk => { S => 'u2' }, sk => { S => 'o002' } },
		UpdateExpression => 'SET st = :s, cust = :c',
		ExpressionAttributeValues => { ':s' => { S => 'moved' }, ':c' => { S => 'c0' } } });
	is($node->safe_psql($db, q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't',
		"$what: GSI caught up after writes");
	is($node->safe_psql($db, q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ', ' ORDER BY index_name) FROM dynindex.verify_indexes('Orders')}),
		'byCust 0 0 0, byStatus 0 0 0', "$what: verify_indexes clean after writes");
	$q = api($db, 'Query', { TableName => 'Orders', IndexName => 'byCust',
		KeyConditionExpression => 'cust = :c', ExpressionAttributeValues => { ':c' => { S => 'c0' } } });
	is($q->{Count}, 10, "$what: the GSI has the new, moved and deleted items right");

	# New tables, with indexes, on the new version.
	api($db, 'CreateTable', { TableName => 'Fresh', BillingMode => 'PAY_PER_REQUEST',
		AttributeDefinitions => [ map { { AttributeName => $_, AttributeType => 'S' } } qw(id g) ],
		KeySchema => [ { AttributeName => 'id', KeyType => 'HASH' } ],
		GlobalSecondaryIndexes => [ { IndexName => 'byG',
			KeySchema => [ { AttributeName => 'g', KeyType => 'HASH' } ],
			Projection => { ProjectionType => 'ALL' } } ] });
	api($db, 'PutItem', { TableName => 'Fresh', Item => { id => { S => 'x' }, g => { S => 'y' } } });
	is($node->safe_psql($db, q{SELECT dynindex.wait_for_indexes('Fresh', '60 seconds')}), 't',
		"$what: new table's GSI caught up");
	is(api($db, 'Query', { TableName => 'Fresh', IndexName => 'byG', KeyConditionExpression => 'g = :g',
		ExpressionAttributeValues => { ':g' => { S => 'y' } } })->{Count}, 1, "$what: a new table works");
	is(api($db, 'Scan', { TableName => 'Orders', Select => 'COUNT' })->{Count}, $items,
		"$what: the new table leaves the old ones alone");
	api($db, 'DeleteTable', { TableName => 'Fresh' });
}

check_data('old', 'upgraded', 41);
is(api('old', 'GetItem', { TableName => 'Orders', Key => { pk => { S => 'u9' }, sk => { S => 'o900' } } })->{Item}{cust}{S},
	'c9', 'upgraded: the write made at 0.1 just before the update is there');
is(api('old', 'Query', { TableName => 'Orders', IndexName => 'byCust', KeyConditionExpression => 'cust = :c',
	ExpressionAttributeValues => { ':c' => { S => 'c9' } } })->{Count}, 1,
	'upgraded: a GSI change queued at 0.1 was applied after the update');

# ---------------------------------------------------------------------------
# The 0.2 features on the upgraded database.  One entry per feature: its
# name and a check run on the upgraded database 'old' (tables Orders with
# LSI byStatus and GSI byCust, Counters).  A feature landing in a later
# version adds its entry here and its objects are then also covered by the
# catalog comparison below.
# ---------------------------------------------------------------------------
my @FEATURES = (
	[ 'streams' => sub {
		my $db = shift;
		my $d = api($db, 'UpdateTable', { TableName => 'Counters',
			StreamSpecification => { StreamEnabled => JSON::PP::true, StreamViewType => 'NEW_AND_OLD_IMAGES' } })->{TableDescription};
		ok($d->{LatestStreamArn}, 'UpdateTable enables a stream on a table created at 0.1');
		api($db, 'UpdateItem', { TableName => 'Counters', Key => { id => { N => '2' } },
			UpdateExpression => 'ADD n :one', ExpressionAttributeValues => { ':one' => { N => '1' } } });
		is($node->safe_psql($db, q{SELECT string_agg(event_name || ' ' || (old_image->'n'->>'N') || '->' || (new_image->'n'->>'N'), ',') FROM dynindex.stream_records}),
			'MODIFY 13->14', 'the write path records the change with both images');
	} ],
	[ 'backups' => sub {
		my $db = shift;
		my $arn = api($db, 'CreateBackup', { TableName => 'Orders', BackupName => 'upgraded' })->{BackupDetails}{BackupArn};
		ok($arn, 'CreateBackup of a table created at 0.1');
		api($db, 'RestoreTableFromBackup', { TargetTableName => 'OrdersRestored', BackupArn => $arn });
		is($node->safe_psql($db, q{SELECT dynindex.wait_for_indexes('OrdersRestored', '60 seconds')}), 't', 'restored table: indexes built');
		is(api($db, 'Query', { TableName => 'OrdersRestored', IndexName => 'byCust', KeyConditionExpression => 'cust = :c',
			ExpressionAttributeValues => { ':c' => { S => 'c0' } } })->{Count}, 10, 'restored table: its GSI answers');
		api($db, 'DeleteTable', { TableName => 'OrdersRestored' });
		api($db, 'DeleteBackup', { BackupArn => $arn });
	} ],
	[ 'partiql' => sub {
		my $db = shift;
		my $r = api($db, 'ExecuteStatement', { Statement => q{SELECT sk FROM "Orders"."byStatus" WHERE pk = 'u3' AND st = 'open'} });
		is(scalar @{ $r->{Items} }, 10, 'PartiQL SELECT on the LSI of a table created at 0.1');
		api($db, 'ExecuteStatement', { Statement => q{UPDATE "Counters" SET n = n + 100 WHERE id = 0} });
		is(api($db, 'GetItem', { TableName => 'Counters', Key => { id => { N => '0' } } })->{Item}{n}{N}, '113',
			'PartiQL UPDATE of an item written at 0.1');
	} ],
	[ 'metrics' => sub {
		my $db = shift;
		my $rcu = q{SELECT consumed_read_capacity_units FROM dynindex.table_metrics WHERE table_name = 'Counters' AND index_name IS NULL};
		my $before = $node->safe_psql($db, $rcu);
		api($db, 'GetItem', { TableName => 'Counters', Key => { id => { N => '1' } }, ConsistentRead => JSON::PP::true });
		is($node->safe_psql($db, $rcu) - $before, 1,
			'a consistent GetItem counts one read capacity unit in dynindex.table_metrics');
		is($node->safe_psql($db, q{SELECT string_agg(index_name || ' ' || index_type, ', ' ORDER BY index_name) FROM dynindex.table_metrics WHERE table_name = 'Orders'}),
			'byCust GSI, byStatus LSI', 'rows for the LSI and the GSI of a table created at 0.1');
		is($node->safe_psql($db, q{SELECT gsi_queue_depth FROM dynindex.table_metrics WHERE table_name = 'Orders' AND index_name = 'byCust'}),
			'0', 'GSI queue depth of a table created at 0.1');
	} ],
);

for my $f (@FEATURES)
{
	my ($name, $check) = @$f;
	subtest "0.2 feature on the upgraded database: $name" => sub { $check->('old') };
}

# ---------------------------------------------------------------------------
# 1b. A 0.2 database with data, and 0.2 features in use, upgraded in place.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE mid');
$node->safe_psql('mid', q{CREATE EXTENSION dynindex VERSION '0.2'});
is($node->safe_psql('mid', q{SELECT extversion FROM pg_extension WHERE extname = 'dynindex'}),
	'0.2', 'installed at version 0.2');
make_data('mid');
api('mid', 'PutItem', { TableName => 'Orders', Item => {
	pk => { S => 'u9' }, sk => { S => 'o900' }, st => { S => 'open' }, cust => { S => 'c9' } } });
api('mid', 'UpdateTable', { TableName => 'Counters',
	StreamSpecification => { StreamEnabled => JSON::PP::true, StreamViewType => 'NEW_AND_OLD_IMAGES' } });
api('mid', 'UpdateItem', { TableName => 'Counters', Key => { id => { N => '2' } },
	UpdateExpression => 'ADD n :one', ExpressionAttributeValues => { ':one' => { N => '1' } } });
is($node->safe_psql('mid', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't',
	'0.2: GSI caught up');
my $mid_backup = api('mid', 'CreateBackup', { TableName => 'Orders', BackupName => 'at-0.2' })->{BackupDetails}{BackupArn};
ok($mid_backup, '0.2: a backup');
# a GSI's own OnDemandThroughput needs the 0.3 catalog (the table's does not)
like(api_error('mid', 'UpdateTable', { TableName => 'Orders', GlobalSecondaryIndexUpdates => [ { Update => {
	IndexName => 'byCust', OnDemandThroughput => { MaxReadRequestUnits => 10 } } } ] }),
	qr/the OnDemandThroughput of a global secondary index needs version 0\.3 of the extension in this database.*HINT:  Run ALTER EXTENSION dynindex UPDATE\./s,
	'0.2 schema, 0.3 library: a GSI maximum asks for ALTER EXTENSION dynindex UPDATE');

$node->safe_psql('mid', 'ALTER EXTENSION dynindex UPDATE');
is($node->safe_psql('mid', q{SELECT extversion FROM pg_extension WHERE extname = 'dynindex'}),
	$default, "0.2 -> ALTER EXTENSION dynindex UPDATE goes to the default version $default");
is(index_btrees('mid'), $KEYED, '0.2 -> update: the index relations (made at 0.2 with a primary key and a segment index) have one unique btree on the key');
check_data('mid', 'upgraded from 0.2', 41);
is($node->safe_psql('mid', q{SELECT string_agg(event_name || ' ' || (old_image->'n'->>'N') || '->' || (new_image->'n'->>'N'), ',') FROM dynindex.stream_records}),
	'MODIFY 13->14', 'upgraded from 0.2: the stream and its record made at 0.2 are there');
api('mid', 'UpdateItem', { TableName => 'Counters', Key => { id => { N => '0' } },
	UpdateExpression => 'ADD n :one', ExpressionAttributeValues => { ':one' => { N => '1' } } });
is($node->safe_psql('mid', q{SELECT count(*) FROM dynindex.stream_records}), '2',
	'upgraded from 0.2: the stream enabled at 0.2 records new writes');
api('mid', 'RestoreTableFromBackup', { TargetTableName => 'OrdersAt02', BackupArn => $mid_backup });
is(api('mid', 'Query', { TableName => 'OrdersAt02', IndexName => 'byCust', KeyConditionExpression => 'cust = :c',
	ExpressionAttributeValues => { ':c' => { S => 'c0' } } })->{Count}, 8,
	'upgraded from 0.2: a backup made at 0.2 restores, its GSI built');
api('mid', 'DeleteTable', { TableName => 'OrdersAt02' });

# ---------------------------------------------------------------------------
# The 0.3 features, on both upgraded databases ('old' from 0.1, 'mid' from
# 0.2: tables Orders with LSI byStatus and GSI byCust, Counters, both with
# items; Counters has a stream).  One entry per feature, as @FEATURES above.
# ---------------------------------------------------------------------------
my @FEATURES_03 = (
	[ 'on-demand maxima of a table and of its GSI' => sub {
		my $db = shift;
		api($db, 'UpdateTable', { TableName => 'Orders', OnDemandThroughput => { MaxReadRequestUnits => 900, MaxWriteRequestUnits => 800 },
			GlobalSecondaryIndexUpdates => [ { Update => { IndexName => 'byCust', OnDemandThroughput => { MaxWriteRequestUnits => 70 } } } ] });
		api($db, 'UpdateTable', { TableName => 'Orders', OnDemandThroughput => { MaxWriteRequestUnits => -1 },
			GlobalSecondaryIndexUpdates => [ { Update => { IndexName => 'byCust', OnDemandThroughput => { MaxReadRequestUnits => 60 } } } ] });
		my $d = api($db, 'DescribeTable', { TableName => 'Orders' })->{Table};
		is_deeply($d->{OnDemandThroughput}, { MaxReadRequestUnits => 900 }, "the table's maximum, merged, a member removed");
		is_deeply($d->{GlobalSecondaryIndexes}[0]{OnDemandThroughput}, { MaxReadRequestUnits => 60, MaxWriteRequestUnits => 70 },
			"the maximum of a GSI created before the update, merged");
		is($node->safe_psql($db, q{SELECT read_rate || ' ' || write_rate FROM dynindex.throughput_buckets('Orders') WHERE index_name = 'byCust'}),
			'60 70', "the GSI's buckets refill at its maximum");
		api($db, 'UpdateTable', { TableName => 'Orders', OnDemandThroughput => { MaxReadRequestUnits => -1 },
			GlobalSecondaryIndexUpdates => [ { Update => { IndexName => 'byCust',
				OnDemandThroughput => { MaxReadRequestUnits => -1, MaxWriteRequestUnits => -1 } } } ] });
		$d = api($db, 'DescribeTable', { TableName => 'Orders' })->{Table};
		ok(!exists $d->{OnDemandThroughput} && !exists $d->{GlobalSecondaryIndexes}[0]{OnDemandThroughput}, 'all maxima removed');
	} ],
	[ 'point-in-time recovery' => sub {
		my $db = shift;
		my $d = api($db, 'UpdateContinuousBackups', { TableName => 'Orders',
			PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::true, RecoveryPeriodInDays => 3 } });
		is($d->{ContinuousBackupsDescription}{PointInTimeRecoveryDescription}{PointInTimeRecoveryStatus}, 'ENABLED',
			'PITR enabled on a table created before the update');
		my $before = api($db, 'Scan', { TableName => 'Orders', Select => 'COUNT', ConsistentRead => JSON::PP::true })->{Count};
		my $c0 = api($db, 'Query', { TableName => 'Orders', IndexName => 'byCust', KeyConditionExpression => 'cust = :c',
			ExpressionAttributeValues => { ':c' => { S => 'c0' } } })->{Count};
		my $at = $node->safe_psql($db, q{SELECT enabled_at FROM dynindex.pitr WHERE table_name = 'Orders'});
		api($db, 'PutItem', { TableName => 'Orders', Item => { pk => { S => 'pitr' }, sk => { S => 'x' }, st => { S => 'open' },
			cust => { S => 'c0' } } });
		$node->safe_psql($db, "SELECT dynindex.restore_table_to_point_in_time('Orders', 'OrdersBefore', '$at')");
		is(api($db, 'Scan', { TableName => 'OrdersBefore', Select => 'COUNT', ConsistentRead => JSON::PP::true })->{Count}, $before,
			'the restore to the enabling has the items written before it, not the later one');
		is(api($db, 'Query', { TableName => 'OrdersBefore', IndexName => 'byCust', KeyConditionExpression => 'cust = :c',
			ExpressionAttributeValues => { ':c' => { S => 'c0' } } })->{Count}, $c0, 'the restored table answers on its GSI');
		api($db, 'DeleteTable', { TableName => 'OrdersBefore' });
		api($db, 'UpdateContinuousBackups', { TableName => 'Orders',
			PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::false } });
		api($db, 'DeleteItem', { TableName => 'Orders', Key => { pk => { S => 'pitr' }, sk => { S => 'x' } } });
	} ],
	[ 'global tables: regions' => sub {
		my $db = shift;
		$node->safe_psql($db, q{SELECT dynindex.set_region('eu-west-1', 'host=eu.example dbname=app user=rep password=pw')});
		is($node->safe_psql($db, q{SELECT string_agg(region_name || ':' || local || ':' || coalesce(conninfo, ''), ' ' ORDER BY NOT local)
			FROM dynindex.list_regions()}),
			q{us-east-1:true: eu-west-1:false:user='rep' dbname='app' host='eu.example'}, 'a region declared, listed without its password');
		my ($rc, $out, $err) = $node->psql($db, q{SELECT dynindex.api('UpdateTable', '{"TableName": "Orders",
			"ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}')});
		like($err, qr/ValidationException: Update global table operation failed because one or more replicas were not part of the global table/,
			'ReplicaUpdates on a table created before the update sees the declared region');
		is($node->safe_psql($db, q{SELECT dynindex.drop_region('eu-west-1')}), 't', 'the region dropped');
	} ],
	[ 'exports' => sub {
		my $db = shift;
		api($db, 'UpdateContinuousBackups', { TableName => 'Orders',
			PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::true } });
		# a bucket no object store is configured for: the job runs and fails as DynamoDB's export does
		my $d = api($db, 'ExportTableToPointInTime', { TableArn => 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
			S3Bucket => 'nowhere' })->{ExportDescription};
		is($d->{ExportStatus}, 'IN_PROGRESS', 'an export of a table created before the update');
		my $st = '';
		for (1 .. 300)
		{
			$st = api($db, 'DescribeExport', { ExportArn => $d->{ExportArn} })->{ExportDescription};
			last if $st->{ExportStatus} ne 'IN_PROGRESS';
			select(undef, undef, undef, 0.1);
		}
		is("$st->{ExportStatus} $st->{FailureCode}", 'FAILED S3NoSuchBucket', 'its job ran and failed cleanly');
		ok((grep { $_->{ExportArn} eq $d->{ExportArn} } @{ api($db, 'ListExports', {})->{ExportSummaries} }), 'ListExports lists it');
		api($db, 'UpdateContinuousBackups', { TableName => 'Orders',
			PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::false } });
	} ],
);

for my $f (@FEATURES_03)
{
	my ($name, $check) = @$f;
	for my $db ('old', 'mid')
	{
		subtest "0.3 feature on the database upgraded to $default ($db): $name" => sub { $check->($db) };
	}
}

# ---------------------------------------------------------------------------
# 2. pg_dump of 0.1 restores into the default version.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored'), '-f', $dump ],
	'the 0.1 dump restores into a new database');
is($node->safe_psql('restored', q{SELECT extversion FROM pg_extension WHERE extname = 'dynindex'}),
	$default, "the restored database has the default version $default");
# a dump of 0.1 restores its index relations as they were (a primary key): they keep working
is(index_btrees('restored'), 'byCust (pk, sk) + pkey (ipk, isk, pk, sk), byStatus pkey (ipk, isk, pk, sk)',
	'restored from 0.1: the index relations keep their primary keys');
check_data('restored', 'restored from 0.1', 40);

# ---------------------------------------------------------------------------
# 3. Install scripts and update paths agree.
# ---------------------------------------------------------------------------

# One line per catalog fact about the extension in the current database.
my $SNAPSHOT = q{
WITH ext AS (SELECT * FROM pg_extension WHERE extname = 'dynindex'),
members AS (
    SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
rels AS (
    SELECT c.* FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid),
schemas AS (
    SELECT n.* FROM pg_namespace n
     WHERE n.nspname IN ('dynindex', 'dynindex_data')
        OR n.oid IN (SELECT objid FROM members WHERE classid = 'pg_namespace'::regclass))
SELECT replace(line, E'\n', '\n') FROM (
    SELECT format('extension version=%s relocatable=%s schema=%s', extversion, extrelocatable,
                  extnamespace::regnamespace) AS line FROM ext
    UNION ALL
    SELECT format('config-dump %s condition=%L', u.c::regclass, u.cond)
      FROM ext, unnest(ext.extconfig, ext.extcondition) AS u(c, cond)
    UNION ALL
    SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM members
    UNION ALL
    SELECT format('schema %s owner=%s acl=%s comment=%L', nspname, nspowner::regrole, nspacl,
                  obj_description(oid, 'pg_namespace')) FROM schemas
    UNION ALL
    SELECT format('function %s kind=%s acl=%s comment=%L def=%s', p.oid::regprocedure, p.prokind,
                  p.proacl, obj_description(p.oid, 'pg_proc'),
                  CASE WHEN p.prokind <> 'a' THEN pg_get_functiondef(p.oid) END)
      FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
    UNION ALL
    SELECT format('relation %s kind=%s persistence=%s acl=%s options=%s rls=%s/%s comment=%L',
                  c.oid::regclass, c.relkind, c.relpersistence, c.relacl, c.reloptions,
                  c.relrowsecurity, c.relforcerowsecurity, obj_description(c.oid, 'pg_class'))
      FROM rels c
    UNION ALL
    SELECT format('column %s.%s position=%s type=%s notnull=%s default=%s identity=%s generated=%s collation=%s acl=%s comment=%L',
                  c.oid::regclass, a.attname,
                  row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum),
                  format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid),
                  a.attidentity, a.attgenerated,
                  CASE WHEN a.attcollation <> 0 THEN a.attcollation::regcollation::text END,
                  a.attacl, col_description(c.oid, a.attnum))
      FROM rels c
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    UNION ALL
    SELECT format('constraint %s %s: %s deferrable=%s/%s', c.oid::regclass, k.conname,
                  pg_get_constraintdef(k.oid), k.condeferrable, k.condeferred)
      FROM rels c JOIN pg_constraint k ON k.conrelid = c.oid
    UNION ALL
    SELECT format('index %s: %s', i.indexrelid::regclass, pg_get_indexdef(i.indexrelid))
      FROM rels c JOIN pg_index i ON i.indrelid = c.oid
    UNION ALL
    SELECT format('trigger %s: %s', c.oid::regclass, pg_get_triggerdef(t.oid))
      FROM rels c JOIN pg_trigger t ON t.tgrelid = c.oid AND NOT t.tgisinternal
    UNION ALL
    SELECT format('policy %s %s: cmd=%s permissive=%s roles=%s using=%s check=%s', c.oid::regclass,
                  p.polname, p.polcmd, p.polpermissive, p.polroles::regrole[],
                  pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
      FROM rels c JOIN pg_policy p ON p.polrelid = c.oid
    UNION ALL
    SELECT format('view %s: %s', c.oid::regclass, pg_get_viewdef(c.oid)) FROM rels c WHERE c.relkind IN ('v', 'm')
    UNION ALL
    SELECT format('sequence %s: type=%s start=%s inc=%s min=%s max=%s cache=%s cycle=%s',
                  c.oid::regclass, s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin,
                  s.seqmax, s.seqcache, s.seqcycle)
      FROM rels c JOIN pg_sequence s ON s.seqrelid = c.oid
    UNION ALL
    SELECT format('rows %s: %s', c.oid::regclass,
                  (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %s', c.oid::regclass), false, true, '')))[1]::text)
      FROM rels c WHERE c.relkind IN ('r', 'p')
    UNION ALL
    SELECT format('type %s kind=%s acl=%s comment=%L labels=%s domain=%s', t.oid::regtype, t.typtype,
                  t.typacl, obj_description(t.oid, 'pg_type'),
                  (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
                  (SELECT string_agg(pg_get_constraintdef(k.oid), ' ' ORDER BY k.conname) FROM pg_constraint k WHERE k.contypid = t.oid))
      FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
    UNION ALL
    SELECT format('event trigger %s: event=%s function=%s tags=%s enabled=%s', e.evtname, e.evtevent,
                  e.evtfoid::regprocedure, e.evttags, e.evtenabled)
      FROM pg_event_trigger e JOIN members m ON m.classid = 'pg_event_trigger'::regclass AND m.objid = e.oid
    UNION ALL
    SELECT format('init-privs %s: %s %s', pg_describe_object(i.classoid, i.objoid, i.objsubid), i.privtype, i.initprivs)
      FROM pg_init_privs i JOIN members m ON m.classid = i.classoid AND m.objid = i.objoid
    UNION ALL
    SELECT format('default-acl %s %s: %s', d.defaclrole::regrole, d.defaclobjtype, d.defaclacl)
      FROM pg_default_acl d JOIN schemas n ON n.oid = d.defaclnamespace
) facts
ORDER BY line COLLATE "C";
};

# The catalog facts of database $db, as a list of lines.
sub snapshot
{
	my ($db) = @_;
	return [ split /\n/, $node->safe_psql($db, $SNAPSHOT) ];
}

# Lines only in $a and lines only in $b (as "- line" / "+ line").
sub differences
{
	my ($a, $b) = @_;
	my (%ca, %cb);
	$ca{$_}++ for @$a;
	$cb{$_}++ for @$b;
	my @d;
	for my $l (sort keys %ca) { push @d, "- $l" if ($ca{$l} // 0) > ($cb{$l} // 0); }
	for my $l (sort keys %cb) { push @d, "+ $l" if ($cb{$l} // 0) > ($ca{$l} // 0); }
	return \@d;
}

my $n = 0;
# A new empty database with the extension created by the given statements.
sub fresh_db
{
	my (@sql) = @_;
	my $db = 'cmp' . $n++;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, $_) for @sql;
	return $db;
}

my @paths = split /\n/, $node->safe_psql('postgres',
	q{SELECT source || ' ' || target FROM pg_extension_update_paths('dynindex') WHERE path IS NOT NULL ORDER BY 1});
ok(scalar(grep { $_ eq "0.1 $default" } @paths), "there is an update path from 0.1 to $default")
	or diag("update paths: @paths");

my $reference = snapshot(fresh_db('CREATE EXTENSION dynindex'));
ok(scalar(grep { /^member function dynindex\.api\(text,jsonb\)$/ } @$reference) &&
	scalar(grep { /^column dynindex\.tables\.table_name / } @$reference) &&
	scalar(grep { /^config-dump dynindex\.tables / } @$reference) &&
	scalar(grep { /^init-privs function dynindex\.create_access_key/ } @$reference),
	'the snapshot sees members, columns, pg_dump configuration and initial privileges');

for my $p (@paths)
{
	my ($source, $target) = split / /, $p;
	my $direct = snapshot(fresh_db("CREATE EXTENSION dynindex VERSION '$target'"));
	my $updated = snapshot(fresh_db("CREATE EXTENSION dynindex VERSION '$source'",
		"ALTER EXTENSION dynindex UPDATE TO '$target'"));
	my $d = differences($direct, $updated);
	is(scalar(@$d), 0, "CREATE EXTENSION VERSION '$target' = VERSION '$source' + UPDATE TO '$target'")
		or diag(join("\n", "catalog differences (- direct install, + through the update):", @$d));
}

# The comparison catches each kind of difference (so the checks above can fail).
my @tamper = (
	[ 'a comment'        => q{COMMENT ON FUNCTION dynindex.api(text, jsonb) IS 'changed'},     qr/^function dynindex\.api\(text,jsonb\) / ],
	[ 'a function body'  => q{CREATE OR REPLACE FUNCTION dynindex._storage_writes(storage text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint'}, qr/^function dynindex\._storage_writes\(text\) / ],
	[ 'a grant'          => q{GRANT SELECT ON dynindex.tables TO PUBLIC},                       qr/^relation dynindex\.tables / ],
	[ 'a default'        => q{ALTER TABLE dynindex.tables ALTER COLUMN options SET DEFAULT '{"x": 1}'}, qr/^column dynindex\.tables\.options / ],
	[ 'an index'         => q{CREATE INDEX tamper_idx ON dynindex.tags (tag_value)},            qr/^index dynindex\.tamper_idx: / ],
	[ 'a constraint'     => q{ALTER TABLE dynindex.tags ADD CONSTRAINT tamper CHECK (tag_key <> '')}, qr/^constraint dynindex\.tags tamper: / ],
	[ 'a new member'     => q{CREATE FUNCTION dynindex.tamper() RETURNS int LANGUAGE sql AS 'SELECT 1'; ALTER EXTENSION dynindex ADD FUNCTION dynindex.tamper()}, qr/^member function dynindex\.tamper\(\)$/ ],
	[ 'pg_dump config'   => q{UPDATE pg_extension SET extconfig = extconfig || 'dynindex.transaction_tokens'::regclass::oid, extcondition = extcondition || ''::text WHERE extname = 'dynindex'}, qr/^config-dump dynindex\.transaction_tokens / ],
	[ 'a column'         => q{ALTER TABLE dynindex.ttl ADD COLUMN tamper int},                  qr/^column dynindex\.ttl\.tamper / ],
);
for my $t (@tamper)
{
	my ($what, $sql, $expect) = @$t;
	my $d = differences($reference, snapshot(fresh_db('CREATE EXTENSION dynindex', $sql)));
	ok(scalar(grep { /^[-+] / && substr($_, 2) =~ $expect } @$d), "the comparison catches $what")
		or diag(join("\n", 'differences:', @$d));
}

$node->stop;
done_testing();
