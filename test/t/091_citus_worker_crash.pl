# A Citus worker crash during sustained writes: a coordinator and two workers,
# a distributed table with a GSI, sessions writing items with PutItem on many
# partition keys through the coordinator; kill -9 one worker (its postmaster and
# backends), let the writes go on while it is down, restart it.  Every write the
# client saw succeed is there with its content (0 lost acknowledged writes), the
# writes to the dead worker's shards failed with an error (never acknowledged),
# and once the GSI worker caught up, verify_indexes finds 0 discrepancies.
# Skipped when Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use DynCitus;
use IPC::Run;
use JSON::PP;
use Time::HiRes qw(usleep);

my $skip = citus_skip_reason();
plan skip_all => $skip if $skip;

my $SESSIONS    = 3;      # concurrent writers
my $PER_SESSION = 1200;   # items each session writes
my $MIN_ACKED   = 100;    # crash once each session has this many writes acknowledged

my @nodes = citus_cluster([ 'worker1', 'worker2' ],
	"max_prepared_transactions = 50",
	"citus.shard_count = 4",
	"fsync = on", "log_statement = none");
my ($coord, $w1, $w2) = @nodes;
$coord->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Orders","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"st","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"bySt","KeySchema":[{"AttributeName":"st","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]}')});
is($coord->safe_psql('postgres', q{SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex_data.%'}),
	'2', 'the table and its GSI are distributed');
is($coord->safe_psql('postgres', q{SELECT count(DISTINCT nodeport) FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid)
  WHERE s.logicalrelid::text LIKE 'dynindex_data.%'}), '2', 'their shards are on both workers');

sub key_of { my ($s, $i) = @_; return ("user$s-$i", sprintf('order#%06d', $i)); }
sub st_of { my ($s, $i) = @_; return "st" . ($i % 7); }

# Each PutItem is its own (autocommit) statement: "ACK s i" only when it
# returned a result (committed on every node), "FAIL s i" when it raised.
sub script_of
{
	my ($s) = @_;
	my $sql = "\\set ON_ERROR_STOP 0\n";
	for my $i (1 .. $PER_SESSION)
	{
		my ($pk, $sk) = key_of($s, $i);
		my $item = encode_json({ TableName => 'Orders',
			Item => { pk => { S => $pk }, sk => { S => $sk }, st => { S => st_of($s, $i) }, n => { N => "$i" } } });
		$sql .= "SELECT dynindex.api('PutItem', '$item') IS NOT NULL AS ok \\gset\n"
		  . "\\if :ERROR\n\\echo FAIL $s $i\n\\else\n\\echo ACK $s $i\n\\endif\n";
	}
	return $sql;
}

my (@h, @out, @err);
for my $s (1 .. $SESSIONS)
{
	my $file = $coord->basedir . "/writer$s.sql";
	open(my $fh, '>', $file) or die;
	print $fh script_of($s);
	close $fh;
	($out[$s], $err[$s]) = ('', '');
	$h[$s] = IPC::Run::start(
		[ 'psql', '-X', '-q', '-h', $coord->host, '-p', $coord->port, '-d', 'postgres', '-f', $file ],
		'>', \$out[$s], '2>', \$err[$s]);
}

sub acked { my ($s) = @_; return scalar(() = $out[$s] =~ /^ACK /mg); }
# wait until every session has MIN_ACKED writes acknowledged
for (1 .. 6000)
{
	$_->pump_nb for grep { $_->pumpable } @h[ 1 .. $SESSIONS ];   # a session may have finished its writes
	last unless grep { acked($_) < $MIN_ACKED } 1 .. $SESSIONS;
	usleep(20_000);
}
ok(!(grep { acked($_) < $MIN_ACKED } 1 .. $SESSIONS), "each session had $MIN_ACKED writes acknowledged before the crash");

ok(crash_node($w1), 'worker1 killed with SIGKILL (postmaster and backends)');
# the writes go on while worker1 is down
for (1 .. 300)
{
	$_->pump_nb for grep { $_->pumpable } @h[ 1 .. $SESSIONS ];   # a session may have finished its writes
	usleep(10_000);
}
$w1->start;
note('worker1 restarted');

$_->finish for @h[ 1 .. $SESSIONS ];

my (%acked, %failed);
for my $s (1 .. $SESSIONS)
{
	$acked{"$s $1"} = 1 while $out[$s] =~ /^ACK \d+ (\d+)$/mg;
	$failed{"$s $1"} = 1 while $out[$s] =~ /^FAIL \d+ (\d+)$/mg;
}
my $nacked  = scalar keys %acked;
my $nfailed = scalar keys %failed;
note("acknowledged $nacked writes, $nfailed failed");
cmp_ok($nfailed, '>', 0, 'writes to the dead worker failed with an error');
cmp_ok($nacked + $nfailed, '==', $SESSIONS * $PER_SESSION, 'every write was either acknowledged or reported failed');
like(join('', @err[ 1 .. $SESSIONS ]), qr/(connection|server closed|terminat|could not|failed)/i,
	'the failures are connection errors reported to the client');

# prepared transactions left on worker1 by the crash are resolved by Citus
$coord->safe_psql('postgres', 'SELECT recover_prepared_transactions()');

# every acknowledged write is there, with its content
my %stored;
for my $line (split /\n/, $coord->safe_psql('postgres',
	q{SELECT (i->'pk'->>'S') || ' ' || (i->'sk'->>'S') || ' ' || (i->'st'->>'S') || ' ' || (i->'n'->>'N') FROM dynindex.scan('Orders') i}))
{
	my ($pk, $sk, $st, $n) = split / /, $line;
	$stored{"$pk $sk"} = "$st $n";
}
my $lost = 0;
for my $k (keys %acked)
{
	my ($s, $i) = split / /, $k;
	my ($pk, $sk) = key_of($s, $i);
	my $v = $stored{"$pk $sk"};
	$lost++ unless defined $v && $v eq st_of($s, $i) . " $i";
}
is($lost, 0, "0 lost acknowledged writes (of $nacked)");
my $unexpected = grep {
	my ($pk, $sk) = split / /, $_;
	my ($s, $i) = $pk =~ /^user(\d+)-(\d+)$/;
	!defined $s || !($acked{"$s $i"} || $failed{"$s $i"});
} keys %stored;
is($unexpected, 0, 'no item that was never written');
cmp_ok(scalar(keys %stored), '<=', $nacked + $nfailed, 'stored items: the acknowledged ones and perhaps some that failed late');

# the GSI catches up and matches the table
is($coord->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '120 seconds')}), 't', 'the GSI caught up');
is($coord->safe_psql('postgres', q{SELECT index_name || ' ' || missing || ' ' || extra || ' ' || stale FROM dynindex.verify_indexes('Orders')}),
	'bySt 0 0 0', '0 index discrepancies');
is($coord->safe_psql('postgres', q{SELECT sum((dynindex.api('Query', jsonb_build_object('TableName', 'Orders', 'IndexName', 'bySt',
  'KeyConditionExpression', 'st = :s', 'Select', 'COUNT', 'ExpressionAttributeValues', jsonb_build_object(':s', jsonb_build_object('S', 'st' || g)))) ->> 'Count')::int)
  FROM generate_series(0, 6) g}), scalar(keys %stored), 'GSI Queries count every stored item');

$_->stop for reverse @nodes;
done_testing();
