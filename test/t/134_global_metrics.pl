# Global tables' monitoring (docs/global-tables.md "Monitoring"): while
# eu-west-1 is stopped, us-east-1's replication_status() counts the item
# changes made there that eu-west-1 has not applied (PendingReplicationCount):
# exactly the changes of the committed transactions — puts, an update, a
# delete, a batch, a transaction, a savepoint's kept change — and not those of
# a rolled-back transaction, a rolled-back savepoint or a failed conditional
# write; 0 again once eu-west-1 is back and has applied them.
# ReplicationLatency of the changes applied is shown; the same figures come
# out of dynindex.replication_metrics() (pg_monitor may read it, an ordinary
# role may not) and out of dynindex_http's Prometheus endpoint as
# dynindex_replication_* with the two regions as labels.  Counts only, never
# timings.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynGlobal;

my ($east, $west) = global_pair('m');

# us-east-1 serves the Prometheus endpoint (dynindex_http, a restart)
my $hport = PostgreSQL::Test::Cluster::get_free_port();
my $mport = PostgreSQL::Test::Cluster::get_free_port();
$east->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'dynindex,dynindex_http'
dynindex_http.port = $hport
dynindex_http.dev = on
dynindex_http.metrics_port = $mport
EOC
$east->restart;
my $murl = "http://127.0.0.1:$mport/metrics";

# The samples of one scrape of us-east-1: { 'name{labels}' => value }, and the TYPE lines.
sub scrape
{
	my $r = HTTP::Tiny->new(timeout => 10, keep_alive => 0)->get($murl);
	return undef unless $r->{status} == 200;
	my %m;
	for (split /\n/, $r->{content})
	{
		$m{"TYPE $1"} = $2 if /^# TYPE (\S+) (\S+)$/;
		next if /^#/;
		$m{$1} = $2 if /^(\S+) (\S+)$/;
	}
	return \%m;
}

# us-east-1's count for eu-west-1: "count exact".
sub pending
{
	return $east->safe_psql('postgres', q{SELECT pending_replication_count || ' ' || pending_count_exact
	  FROM dynindex.replication_status() WHERE region_name = 'eu-west-1'});
}

ok($east->poll_query_until('postgres', q{SELECT streaming FROM dynindex.replication_status() WHERE region_name = 'eu-west-1'}),
	'us-east-1 restarted: eu-west-1 streams again');
api($east, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"c"},"sk":{"N":"1"},"v":{"S":"before"}}}');
ok($east->poll_query_until('postgres', q{SELECT pending_replication_count = 0 AND pending_count_exact
	  FROM dynindex.replication_status() WHERE region_name = 'eu-west-1'}),
	'a change made after the restart is applied: nothing pending, and the count is exact');

$west->stop;
# 5 puts, an update, a delete: 7
api($east, 'PutItem', qq({"TableName":"Glob","Item":{"pk":{"S":"p$_"},"sk":{"N":"1"},"g":{"S":"x"}}})) for 1 .. 5;
api($east, 'UpdateItem', '{"TableName":"Glob","Key":{"pk":{"S":"p1"},"sk":{"N":"1"}},"UpdateExpression":"SET n = :n","ExpressionAttributeValues":{":n":{"N":"1"}}}');
api($east, 'DeleteItem', '{"TableName":"Glob","Key":{"pk":{"S":"c"},"sk":{"N":"1"}}}');
is(pending(), '7 true', 'eu-west-1 stopped: 5 puts, an update and a delete are pending');
# a batch of 3 and a transaction of 2: 12
api($east, 'BatchWriteItem', '{"RequestItems":{"Glob":[' . join(',', map { qq({"PutRequest":{"Item":{"pk":{"S":"b$_"},"sk":{"N":"1"}}}}) } 1 .. 3) . ']}}');
api($east, 'TransactWriteItems', '{"TransactItems":[{"Put":{"TableName":"Glob","Item":{"pk":{"S":"t"},"sk":{"N":"1"}}}},'
	. '{"Update":{"TableName":"Glob","Key":{"pk":{"S":"t"},"sk":{"N":"2"}},"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":"txn"}}}}]}');
is(pending(), '12 true', 'a BatchWriteItem of 3 and a transaction of 2 add 5');
# nothing of a failed condition, a rolled-back transaction, a rolled-back savepoint; a kept one counts: 13
my ($rc, $out, $err) = $east->psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"p1"},"sk":{"N":"1"}},"ConditionExpression":"attribute_not_exists(pk)"}')});
like($err, qr/ConditionalCheckFailedException/, 'a conditional put fails');
$east->safe_psql('postgres', q{BEGIN;
  SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"r1"},"sk":{"N":"1"}}}');
  ROLLBACK;
  BEGIN;
  SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"s1"},"sk":{"N":"1"}}}');
  SAVEPOINT a;
  SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"s2"},"sk":{"N":"1"}}}');
  SAVEPOINT b;
  SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"s3"},"sk":{"N":"1"}}}');
  ROLLBACK TO SAVEPOINT a;
  SAVEPOINT c;
  SELECT dynindex.api('PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"s4"},"sk":{"N":"1"}}}');
  RELEASE SAVEPOINT c;
  COMMIT;});
is(pending(), '14 true', 'a rolled-back transaction, a failed condition and a rolled-back savepoint add nothing; the kept changes (2) do');
is($east->safe_psql('postgres', q{SELECT pending_count || ' ' || pending_count_exact || ' ' || (pending_bytes > 0)
  FROM dynindex.replication_metrics() WHERE source_region = 'us-east-1' AND receiving_region = 'eu-west-1'}),
	'14 1 true', 'replication_metrics(): the same count, and WAL bytes pending, from us-east-1 to eu-west-1');

my $m;
ok(($m = scrape()), 'us-east-1 answers a scrape');
is($m->{'dynindex_replication_pending_count{source_region="us-east-1",receiving_region="eu-west-1"}'}, 14,
	'Prometheus: dynindex_replication_pending_count of eu-west-1');
is($m->{'TYPE dynindex_replication_pending_count'}, 'gauge', 'Prometheus: the pending count is a gauge');
is($m->{'dynindex_replication_pending_count_exact{source_region="us-east-1",receiving_region="eu-west-1"}'}, 1,
	'Prometheus: the count is exact');

$west->start;
ok($east->poll_query_until('postgres', q{SELECT pending_replication_count = 0 AND pending_count_exact
	  FROM dynindex.replication_status() WHERE region_name = 'eu-west-1'}),
	'eu-west-1 back: it applied every change, nothing pending');
ok(converged($east, $west), 'and both regions hold the same items');
is($west->safe_psql('postgres', q{SELECT applied_changes >= 14 AND replication_latency_ms >= 0 AND replication_latency_avg_ms >= 0
  FROM dynindex.replication_status() WHERE region_name = 'us-east-1'}),
	't', 'eu-west-1 shows the latency of the changes it applied from us-east-1');

# a change of eu-west-1 applied in us-east-1: its latency in the export
api($west, 'PutItem', '{"TableName":"Glob","Item":{"pk":{"S":"w"},"sk":{"N":"1"}}}');
ok($east->poll_query_until('postgres', q{SELECT applied_changes > 0 FROM dynindex.replication_status() WHERE region_name = 'eu-west-1'}),
	'us-east-1 applied a change of eu-west-1');
$m = scrape();
ok(defined $m->{'dynindex_replication_latency_ms{source_region="eu-west-1",receiving_region="us-east-1"}'}
	  && $m->{'dynindex_replication_latency_ms{source_region="eu-west-1",receiving_region="us-east-1"}'} >= 0,
	'Prometheus: dynindex_replication_latency_ms of the changes of eu-west-1');
cmp_ok($m->{'dynindex_replication_applied_changes{source_region="eu-west-1",receiving_region="us-east-1"}'} // 0, '>=', 1,
	'Prometheus: the changes of eu-west-1 applied here');
is($m->{'TYPE dynindex_replication_applied_changes'}, 'counter', 'Prometheus: applied_changes is a counter');
ok(wait_for_zero(), 'Prometheus: nothing pending for eu-west-1 any more');

# The pending count reaches 0 in the export too.
sub wait_for_zero
{
	for (1 .. 300)
	{
		my $s = scrape();
		return 1 if $s && ($s->{'dynindex_replication_pending_count{source_region="us-east-1",receiving_region="eu-west-1"}'} // -1) == 0;
		usleep(100_000);
	}
	return 0;
}

# who may read the figures
$east->safe_psql('postgres', q{CREATE ROLE mon LOGIN IN ROLE pg_monitor; CREATE ROLE nobody LOGIN});
is($east->safe_psql('postgres', q{SET ROLE mon; SELECT count(*) FROM dynindex.replication_metrics()}), '2',
	'pg_monitor reads replication_metrics(): a row each way for the one other region');
($rc, $out, $err) = $east->psql('postgres', q{SET ROLE nobody; SELECT * FROM dynindex.replication_metrics()});
like($err, qr/permission denied for function replication_metrics/, 'an ordinary role may not');

done_testing();
