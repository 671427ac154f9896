# Reads from a hot standby: a streaming standby of a dynindex primary serves
# GetItem, BatchGetItem, Query, Scan (also of a GSI, and a parallel Scan),
# DescribeTable and ListTables with the replicated data, and refuses every
# write with ServiceUnavailable (SQLSTATE YD503) -- PutItem, UpdateItem,
# DeleteItem, BatchWriteItem, TransactWriteItems, CreateTable -- leaving the
# data unchanged; the primary keeps taking writes, which reach the standby.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynStandby;

my $primary = orders_primary('primary');
is($primary->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders')}), 't', 'GSI applied on the primary');
my $standby = hot_standby($primary, 'standby');

# a write after the backup, replicated by streaming
$primary->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"late"},"sk":{"N":"1"},"st":{"S":"open"},"v":{"S":"streamed"}}}')});
$primary->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders')});
$primary->wait_for_catchup($standby, 'replay');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# reads on the standby
sub sq { my ($sql) = @_; return $standby->safe_psql('postgres', $sql); }
is(sq(q{SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"late"},"sk":{"N":"1"}}}') -> 'Item' -> 'v' ->> 'S'}),
	'streamed', 'GetItem on the standby returns an item written after the backup');
is(sq(q{SELECT dynindex.api('Query', '{"TableName":"Orders","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"u3"}}}') ->> 'Count'}),
	'10', 'Query of one partition key on the standby');
is(sq(q{SELECT dynindex.api('Scan', '{"TableName":"Orders","Select":"COUNT"}') ->> 'Count'}), '101', 'Scan on the standby');
is(sq(q{SELECT sum((dynindex.api('Scan', jsonb_build_object('TableName', 'Orders', 'Segment', s, 'TotalSegments', 4)) ->> 'Count')::int) FROM generate_series(0, 3) s}),
	'101', 'parallel Scan on the standby');
is(sq(q{SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"bySt","KeyConditionExpression":"st = :s","Select":"COUNT","ExpressionAttributeValues":{":s":{"S":"open"}}}') ->> 'Count'}),
	'34', 'GSI Query on the standby');
is(sq(q{SELECT jsonb_array_length(dynindex.api('BatchGetItem', '{"RequestItems":{"Orders":{"Keys":[{"pk":{"S":"u1"},"sk":{"N":"1"}},{"pk":{"S":"u2"},"sk":{"N":"2"}}]}}}') -> 'Responses' -> 'Orders')}),
	'2', 'BatchGetItem on the standby');
is(sq(q{SELECT dynindex.api('DescribeTable', '{"TableName":"Orders"}') -> 'Table' ->> 'TableStatus'}), 'ACTIVE', 'DescribeTable on the standby');
is(sq(q{SELECT dynindex.api('ListTables', '{}') -> 'TableNames'}), '["Orders"]', 'ListTables on the standby');

# writes on the standby: refused with ServiceUnavailable (YD503), nothing changes
my %writes = (
	PutItem            => q({"TableName":"Orders","Item":{"pk":{"S":"x"},"sk":{"N":"1"}}}),
	UpdateItem         => q({"TableName":"Orders","Key":{"pk":{"S":"u1"},"sk":{"N":"1"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":"no"}}}),
	DeleteItem         => q({"TableName":"Orders","Key":{"pk":{"S":"u1"},"sk":{"N":"1"}}}),
	BatchWriteItem     => q({"RequestItems":{"Orders":[{"PutRequest":{"Item":{"pk":{"S":"x"},"sk":{"N":"2"}}}}]}}),
	TransactWriteItems => q({"TransactItems":[{"Put":{"TableName":"Orders","Item":{"pk":{"S":"x"},"sk":{"N":"3"}}}}]}),
	CreateTable        => q({"TableName":"Other","BillingMode":"PAY_PER_REQUEST","KeySchema":[{"AttributeName":"k","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"k","AttributeType":"S"}]}),
	DeleteTable        => q({"TableName":"Orders"}),
);
for my $op (sort keys %writes)
{
	my ($rc, $out, $err) = $standby->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT dynindex.api('$op', '$writes{$op}')");
	isnt($rc, 0, "$op fails on the standby");
	like($err, qr/ERROR:  YD503: ServiceUnavailable: The request has failed due to a temporary failure of the server\./,
		"$op: ServiceUnavailable (YD503)");
	like($err, qr/HINT:  This server is a hot standby \(read-only\): send $op to the primary\./, "$op: the hint names the primary");
}
# a PartiQL statement runs there: a SELECT is served, an INSERT is refused when it reaches storage
is(sq(q{SELECT dynindex.api('ExecuteStatement', $$\{"Statement":"SELECT v FROM Orders WHERE pk = 'late' AND sk = 1"\}$$) -> 'Items' -> 0 -> 'v' ->> 'S'}),
	'streamed', 'ExecuteStatement SELECT on the standby');
{
	my ($rc, $out, $err) = $standby->psql('postgres',
		q{SELECT dynindex.api('ExecuteStatement', $$\{"Statement":"INSERT INTO Orders VALUE \{'pk':'y','sk':1\}"\}$$)});
	like($err, qr/ERROR:  ServiceUnavailable: The request has failed due to a temporary failure of the server\.
HINT:  This server is a hot standby \(read-only\): send ExecuteStatement to the primary\./,
		'ExecuteStatement INSERT on the standby: ServiceUnavailable when the write reaches storage');
}
is(sq(q{SELECT dynindex.api('Scan', '{"TableName":"Orders","Select":"COUNT"}') ->> 'Count'}), '101', 'the refused writes changed nothing');
is(sq(q{SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"u1"},"sk":{"N":"1"}}}') -> 'Item' ? 'v'}), 'f',
	'the refused UpdateItem changed nothing');

# the primary still takes writes, and they reach the standby
$primary->safe_psql('postgres', q{SELECT dynindex.api('DeleteItem', '{"TableName":"Orders","Key":{"pk":{"S":"u1"},"sk":{"N":"1"}}}')});
$primary->wait_for_catchup($standby, 'replay');
is(sq(q{SELECT dynindex.api('Scan', '{"TableName":"Orders","Select":"COUNT"}') ->> 'Count'}), '100', 'a delete on the primary reaches the standby');

$standby->stop;
$primary->stop;
done_testing();
