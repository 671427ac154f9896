# GSIs you can read your writes from (dynindex.gsi_read_your_writes) against
# a worker that does not apply: stopped (SIGSTOP), the bounded wait of a
# read ends with ServiceUnavailable and its hint, a read without the setting
# answers at once without the write; a read that waits while the worker
# resumes (SIGCONT), or while a new worker replaces a terminated one, sees the
# write.  docs/gsi.md, "Reading your writes".
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('gsi_ryw');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\ndynindex.ttl_interval = 0\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Ryw","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}')});

my $query = q{SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}') ->> 'Count'};
sub put
{
	my ($k) = @_;
	$node->safe_psql('postgres', qq{SELECT dynindex.api('PutItem', '{"TableName":"Ryw","Item":{"pk":{"S":"$k"},"g":{"S":"x"}}}')});
}
sub worker_pid
{
	my $pid;
	foreach (1 .. 600)
	{
		$pid = $node->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex worker' AND datname = 'postgres'});
		return $pid if $pid;
		usleep(50_000);
	}
	die 'no dynindex worker';
}

put('a');
is($node->safe_psql('postgres', "SET dynindex.gsi_read_your_writes = on; $query"), '1', 'a write is seen at once');

# the worker stopped: the change stays queued
my $pid = worker_pid();
kill 'STOP', $pid;
put('b');
my ($ret, $out, $err) = $node->psql('postgres',
	"SET dynindex.gsi_read_your_writes = on; SET dynindex.gsi_read_your_writes_timeout = '300ms'; $query");
isnt($ret, 0, 'worker stopped: the read fails after its timeout');
like($err, qr/ERROR:  ServiceUnavailable: The request has failed due to a temporary failure of the server\./,
	'  ... with ServiceUnavailable');
like($err, qr/HINT:  The global secondary index has not applied every change of its table committed before the read within 300 ms/,
	'  ... and the hint');
is($node->safe_psql('postgres', $query), '1', 'without the setting: answered at once, without the write');

# a read waiting while the worker resumes sees the write
my ($rout, $rerr) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
	  '-c', "SET dynindex.gsi_read_your_writes = on; SET dynindex.gsi_read_your_writes_timeout = '120s'; $query" ],
	'>', \$rout, '2>', \$rerr);
# the reader is waiting (on the worker's condition variable) before the worker resumes
foreach (1 .. 600)
{
	last if $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%"TableName":"Ryw"%' AND wait_event_type = 'Extension' AND pid <> pg_backend_pid()}) eq '1';
	usleep(50_000);
}
kill 'CONT', $pid;
$h->finish;
is($rout, "2\n", 'a read waiting while the worker resumes sees the write');
is($rerr, '', '  ... without an error');

# the worker terminated with a change queued: a new one applies it, and the waiting read sees it
kill 'STOP', $pid;
put('c');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
kill 'CONT', $pid;
is($node->safe_psql('postgres', "SET dynindex.gsi_read_your_writes = on; SET dynindex.gsi_read_your_writes_timeout = '120s'; $query"),
	'3', 'worker terminated: the read waits for its successor and sees the write');
isnt(worker_pid(), $pid, '  ... applied by a new worker');

is($node->safe_psql('postgres', q{SELECT missing || ' ' || extra || ' ' || stale FROM dynindex.verify_indexes('Ryw')}), '0 0 0',
	'the index verifies');
$node->stop;
done_testing();
