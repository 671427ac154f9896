# A database whose worker finds no background worker slot (max_worker_processes)
# is said in the server log, with the setting to raise, instead of its GSI
# changes waiting in silence; once a slot frees the worker starts and applies them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_slots');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
# the logical replication launcher, dynindex's launcher and one database worker:
# no room for a second database's worker
$node->append_conf('postgresql.conf', "max_worker_processes = 3\nmax_parallel_workers = 0\n");
$node->start;

my $gsi = q{SELECT dynindex.api('CreateTable', '{"TableName":"Tab","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL};
my $put = q{SELECT dynindex.api('PutItem', '{"TableName":"Tab","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}') IS NOT NULL};
for my $db ('one', 'two')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION dynindex');
	$node->safe_psql($db, $gsi);
}
$node->safe_psql('one', $put);
is($node->safe_psql('one', q{SELECT dynindex.wait_for_indexes('Tab', '30 s')}), 't', "the first database's worker applies its change");

my $two = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'two'});
$node->safe_psql('two', $put);
ok($node->wait_for_log(qr/WARNING:  dynindex: no background worker slot for the worker of database $two: its GSI changes, Time to Live and stream maintenance wait/),
	'no slot for the second database: a WARNING says so');
like(slurp_file($node->logfile), qr/HINT:  Raise max_worker_processes/, 'and names the setting');
is($node->safe_psql('two', q{SELECT dynindex.wait_for_indexes('Tab', '1 s')}), 'f', 'its change waits');

# the first database goes away with its worker: the second gets the slot
$node->safe_psql('postgres', 'DROP DATABASE one');
is($node->safe_psql('two', q{SELECT dynindex.wait_for_indexes('Tab', '60 s')}), 't', 'once a slot is free the change is applied');

$node->stop;
done_testing();
