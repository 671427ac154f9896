# Logical backup: pg_dump of a database with dynindex tables (LSI, GSI, tags,
# TTL) restored into a new database gives the same
# DynamoDB tables — items, index contents, tags, TTL — and keeps working:
# writes maintain the indexes, and a new table does not collide with a
# restored one's storage.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;

sub api
{
	my ($db, $op, $req) = @_;
	my $json = ref $req ? encode_json($req) : $req;
	$json =~ s/'/''/g;
	my $out = $node->safe_psql($db, "SELECT dynindex.api('$op', '$json')");
	return decode_json($out);
}

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION dynindex');
api('src', 'CreateTable', {
	TableName => 'Orders', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ map { { AttributeName => $_, AttributeType => 'S' } } qw(pk sk st cust) ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' }, { AttributeName => 'sk', KeyType => 'RANGE' } ],
	LocalSecondaryIndexes => [ { IndexName => 'byStatus',
		KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' }, { AttributeName => 'st', KeyType => 'RANGE' } ],
		Projection => { ProjectionType => 'ALL' } } ],
	GlobalSecondaryIndexes => [ { IndexName => 'byCust',
		KeySchema => [ { AttributeName => 'cust', KeyType => 'HASH' } ],
		Projection => { ProjectionType => 'KEYS_ONLY' } } ],
	Tags => [ { Key => 'team', Value => 'orders' } ] });
api('src', 'UpdateTimeToLive', { TableName => 'Orders',
	TimeToLiveSpecification => { Enabled => JSON::PP::true, AttributeName => 'expires' } });
for my $i (1 .. 20)
{
	api('src', 'PutItem', { TableName => 'Orders', Item => {
		pk => { S => 'u' . ($i % 4) }, sk => { S => sprintf('o%03d', $i) },
		st => { S => $i % 2 ? 'open' : 'done' }, cust => { S => 'c' . ($i % 3) } } });
}
is($node->safe_psql('src', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't', 'GSI caught up');
my $arn = api('src', 'DescribeTable', { TableName => 'Orders' })->{Table}{TableArn};

my $dump = $node->basedir . '/src.sql';
command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-f', $dump ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('dst'), '-f', $dump ],
	'restore into a new database');

my $q = api('dst', 'Query', { TableName => 'Orders', KeyConditionExpression => 'pk = :p',
	ExpressionAttributeValues => { ':p' => { S => 'u1' } } });
is($q->{Count}, 5, 'restored table: Query finds the partition');
$q = api('dst', 'Query', { TableName => 'Orders', IndexName => 'byStatus',
	KeyConditionExpression => 'pk = :p AND st = :s',
	ExpressionAttributeValues => { ':p' => { S => 'u1' }, ':s' => { S => 'open' } } });
is($q->{Count}, 5, 'restored LSI');
$q = api('dst', 'Query', { TableName => 'Orders', IndexName => 'byCust',
	KeyConditionExpression => 'cust = :c', ExpressionAttributeValues => { ':c' => { S => 'c0' } } });
is($q->{Count}, 6, 'restored GSI');
my $tags = api('dst', 'ListTagsOfResource', { ResourceArn => $arn });
is_deeply($tags->{Tags}, [ { Key => 'team', Value => 'orders' } ], 'restored tags');
my $ttl = api('dst', 'DescribeTimeToLive', { TableName => 'Orders' });
is($ttl->{TimeToLiveDescription}{AttributeName}, 'expires', 'restored TTL setting');

# The restored database keeps working: writes maintain both indexes ...
api('dst', 'PutItem', { TableName => 'Orders', Item => {
	pk => { S => 'u1' }, sk => { S => 'o999' }, st => { S => 'open' }, cust => { S => 'c0' } } });
is($node->safe_psql('dst', q{SELECT dynindex.wait_for_indexes('Orders', '60 seconds')}), 't',
	'GSI worker runs in the restored database');
is($node->safe_psql('dst', q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ', ' ORDER BY index_name) FROM dynindex.verify_indexes('Orders')}),
	'byCust 0 0 0, byStatus 0 0 0', 'both indexes verify clean after the restore and a write');
# ... and a new table gets its own storage, not a restored table's.
api('dst', 'CreateTable', { TableName => 'Other', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'id', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'id', KeyType => 'HASH' } ] });
api('dst', 'PutItem', { TableName => 'Other', Item => { id => { S => 'x' } } });
is(api('dst', 'Scan', { TableName => 'Orders', Select => 'COUNT' })->{Count}, 21,
	'a table created after the restore leaves the restored ones alone');
is_deeply([ sort @{ api('dst', 'ListTables', {})->{TableNames} } ], [ 'Orders', 'Other' ], 'ListTables');

$node->stop;
done_testing();
