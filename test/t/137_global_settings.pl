# Global tables: what DynamoDB applies to every replica (docs/global-tables.md).
# A table's time to live and its GSIs (and billing mode and capacity) changed in
# one region reach the other through the replication stream, in commit order with
# the items; TTL deletions replicate like any delete (the other region's LSI, GSI
# and stream follow); a change the other region already has (both regions made it)
# is skipped there with a warning and the stream goes on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGlobal;

my ($east, $west) = global_pair('');

# a second table, with an LSI, on both sides, replicated both ways
for my $n ($east, $west)
{
	api($n, 'CreateTable', '{"TableName":"Life","BillingMode":"PAY_PER_REQUEST",
	  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
	  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],
	  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
	  "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}');
}
$east->safe_psql('postgres', q{SELECT dynindex._replicate_table('Life', 'eu-west-1')});
$west->safe_psql('postgres', q{SELECT dynindex._replicate_table('Life', 'us-east-1')});

sub ttl_of
{
	my ($n, $table) = @_;
	return $n->safe_psql('postgres', qq{SELECT d->>'TimeToLiveStatus' || ' ' || coalesce(d->>'AttributeName', '')
	  FROM (SELECT dynindex.api('DescribeTimeToLive', '{"TableName":"$table"}')->'TimeToLiveDescription' AS d) s});
}

sub lsi_count
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Life","IndexName":"byL","Select":"COUNT","ConsistentRead":true,
	  "KeyConditionExpression":"pk = :p AND begins_with(l, :l)","ExpressionAttributeValues":{":p":{"S":"p"},":l":{"S":"L"}}}')->>'Count'});
}

# ---- time to live: set in us-east-1, in force in eu-west-1 ----
api($east, 'UpdateTimeToLive', '{"TableName":"Life","TimeToLiveSpecification":{"AttributeName":"exp","Enabled":true}}');
ok($west->poll_query_until('postgres', q{SELECT dynindex.api('DescribeTimeToLive', '{"TableName":"Life"}')->'TimeToLiveDescription'->>'TimeToLiveStatus' = 'ENABLED'}),
	'UpdateTimeToLive in us-east-1 reaches eu-west-1');
is(ttl_of($west, 'Life'), 'ENABLED exp', 'eu-west-1 expires items on the same attribute');
is(ttl_of($east, 'Glob'), 'DISABLED ', 'another table\'s time to live is untouched');

# three items, two of them expired an hour ago
for my $i (1 .. 3)
{
	my $exp = $i < 3 ? time() - 3600 : time() + 86400;
	api($east, 'PutItem', qq{{"TableName":"Life","Item":{"pk":{"S":"p"},"sk":{"S":"s$i"},"l":{"S":"L$i"},"exp":{"N":"$exp"}}}});
}
ok($west->poll_query_until('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Life","IndexName":"byL","Select":"COUNT","ConsistentRead":true,
	  "KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"p"}}}')->>'Count' = '3'}),
	'the items reach the LSI of eu-west-1');
# the TTL deletions of us-east-1 (its worker may get there first: both are fine)
$east->safe_psql('postgres', q{SELECT dynindex.expire_items('Life')});
ok($west->poll_query_until('postgres', q{SELECT dynindex.api('Scan', '{"TableName":"Life","Select":"COUNT","ConsistentRead":true}')->>'Count' = '1'}),
	'the TTL deletions of us-east-1 reach eu-west-1');
is(lsi_count($west), '1', 'the LSI of eu-west-1 lost the expired items');
is($west->safe_psql('postgres', q{SELECT string_agg(keys->'sk'->>'S', ' ' ORDER BY keys->'sk'->>'S') FROM dynindex.stream_changes('Life') WHERE event_name = 'REMOVE'}),
	's1 s2', 'the stream of eu-west-1 has a REMOVE record for each expired item');
is($east->safe_psql('postgres', q{SELECT count(*) FROM dynindex.stream_changes('Life') WHERE event_name = 'REMOVE' AND user_identity IS NOT NULL}),
	'2', 'in us-east-1 they are the service\'s deletions');
for my $n ($east, $west)
{
	is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Life') WHERE missing + extra + stale > 0}),
		'0', $n->name . ': the LSI verifies');
}

# ---- a GSI created in eu-west-1 is created in us-east-1 and backfilled there ----
api($west, 'UpdateTable', '{"TableName":"Glob","AttributeDefinitions":[{"AttributeName":"n","AttributeType":"N"}],
  "GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byN","KeySchema":[{"AttributeName":"n","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"n"},"sk":{"N":"1"},"n":{"N":"42"}}}');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"n"},"sk":{"N":"2"},"n":{"N":"42"}}}');
for my $n ($east, $west)
{
	ok($n->poll_query_until('postgres', q{SELECT i->>'IndexStatus' = 'ACTIVE' FROM jsonb_array_elements(
	  dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table'->'GlobalSecondaryIndexes') i WHERE i->>'IndexName' = 'byN'}),
		$n->name . ': the GSI byN is ACTIVE');
	$n->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Glob')});
	ok($n->poll_query_until('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Glob","IndexName":"byN","Select":"COUNT",
	  "KeyConditionExpression":"n = :n","ExpressionAttributeValues":{":n":{"N":"42"}}}')->>'Count' = '2'}),
		$n->name . ': byN has the items of both regions');
	is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Glob') WHERE missing + extra + stale > 0}),
		'0', $n->name . ': the GSIs verify');
}
# per-replica settings stay where they were made
api($west, 'UpdateTable', '{"TableName":"Glob","DeletionProtectionEnabled":true}');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"after-protection"},"sk":{"N":"1"}}}');
ok(converged($east, $west), 'the items written after a per-replica setting reach the other region');
is($east->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName":"Glob"}')->'Table'->>'DeletionProtectionEnabled'}),
	'false', 'deletion protection is each replica\'s own');
api($west, 'UpdateTable', '{"TableName":"Glob","DeletionProtectionEnabled":false}');

# ---- the same change made in both regions at once: each skips the other's, the streams go on ----
# eu-west-1's change is left uncommitted while us-east-1's commits and reaches it: the apply
# there waits for it, fails on the key it then finds, and skips the change when it comes again
my ($log_east, $log_west) = (-s $east->logfile, -s $west->logfile);
my ($bg_out, $bg_err) = ('', '');
my $bg = IPC::Run::start([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $west->connstr('postgres'), '-c',
	q{BEGIN; SELECT dynindex.api('UpdateTimeToLive', '{"TableName":"Glob","TimeToLiveSpecification":{"AttributeName":"e","Enabled":true}}');
	  SELECT pg_sleep(3); COMMIT;} ], '>', \$bg_out, '2>', \$bg_err);
ok($west->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'BEGIN; SELECT dynindex.api(%' AND wait_event = 'PgSleep'}),
	'eu-west-1 has changed the setting, not committed yet');
api($east, 'UpdateTimeToLive', '{"TableName":"Glob","TimeToLiveSpecification":{"AttributeName":"e","Enabled":true}}');
$bg->finish;
is($bg_err, '', 'eu-west-1\'s change commits');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"after"},"sk":{"N":"1"}}}');
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"after"},"sk":{"N":"2"}}}');
ok(converged($east, $west), 'after the same setting changed in both regions, items still flow both ways');
is(ttl_of($east, 'Glob') . ' / ' . ttl_of($west, 'Glob'), 'ENABLED e / ENABLED e', 'both regions have the setting');
for my $w ([ $east, $log_east, 'eu-west-1' ], [ $west, $log_west, 'us-east-1' ])
{
	ok($w->[0]->wait_for_log(qr/dynindex apply: UpdateTimeToLive of table "Glob" from region "$w->[2]" not applied here: ValidationException: TimeToLive is already enabled/, $w->[1]),
		$w->[0]->name . ': the change it already had is skipped with a warning');
}

my ($rc, $out, $err);
# ---- replicated items keep the receiving side's permissions ----
# (an item written in us-east-1 is applied in eu-west-1 by its apply worker; readers there
#  are checked against eu-west-1's grants as for any item)
$west->safe_psql('postgres', q{CREATE ROLE glob_none LOGIN; CREATE ROLE glob_ro LOGIN;
  SELECT dynindex.grant_table('Glob', 'glob_ro', 'read')});
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"perm"},"sk":{"N":"1"},"v":{"S":"secret"}}}');
ok($west->poll_query_until('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"perm"},"sk":{"N":"1"}}}') ? 'Item'}),
	'the item reaches eu-west-1');
($rc, $out, $err) = $west->psql('postgres', q{SET ROLE glob_none; SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"perm"},"sk":{"N":"1"}}}')});
like($err, qr/AccessDeniedException: User: \S+glob_none is not authorized to perform: dynamodb:GetItem/,
	'a role without rights on the table in eu-west-1 cannot read the replicated item');
is($west->safe_psql('postgres', q{SET ROLE glob_ro; SELECT dynindex.api('GetItem', '{"TableName":"Glob","Key":{"pk":{"S":"perm"},"sk":{"N":"1"}}}')->'Item'->'v'->>'S'}),
	'secret', 'a role granted read there reads it');
($rc, $out, $err) = $west->psql('postgres', q{SET ROLE glob_ro; SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"perm"},"sk":{"N":"2"}}}')});
like($err, qr/AccessDeniedException: .*dynamodb:PutItem/, 'and cannot write it');

done_testing();
