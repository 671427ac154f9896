# Crash safety of local secondary indexes: kill -9 the postmaster (and its
# backends) while sessions put, move (UpdateItem of the LSI sort key) and
# delete items of a table with three LSIs (ALL, KEYS_ONLY, INCLUDE; one
# sparse), restart, and check that every LSI matches the table exactly
# (dynindex.verify_indexes all zeros) and that acknowledged writes are
# visible through a strongly consistent Query on the LSI.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use IPC::Run;
use JSON::PP;
use Time::HiRes qw(usleep);

my $SESSIONS    = 2;        # concurrent writers
my $PER_SESSION = 20000;    # more than they write before the crash
my $MIN_ACKED   = 200;      # crash once each session has this many commits acknowledged

my $node = PostgreSQL::Test::Cluster->new('lsi_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
  if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->append_conf('postgresql.conf', "fsync = on\nlog_statement = none\n");
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Thread","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"f","AttributeType":"S"},{"AttributeName":"s","AttributeType":"S"},{"AttributeName":"t","AttributeType":"S"},{"AttributeName":"n","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"f","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[
    {"IndexName":"byT","KeySchema":[{"AttributeName":"f","KeyType":"HASH"},{"AttributeName":"t","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}},
    {"IndexName":"byN","KeySchema":[{"AttributeName":"f","KeyType":"HASH"},{"AttributeName":"n","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}},
    {"IndexName":"byT2","KeySchema":[{"AttributeName":"f","KeyType":"HASH"},{"AttributeName":"t","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["body"]}}]}')});

# Writer s, step i: put item i (n only on even i: byN is sparse), move item
# i-1 to a new t, delete item i-2 on every third step.  One transaction per step.
sub step_sql
{
	my ($s, $i) = @_;
	my $f = "F" . ($i % 3);
	my %item = (f => { S => $f }, s => { S => sprintf('w%d-%08d', $s, $i) },
		t => { S => sprintf('2015-%08d', $i) }, body => { S => "body $s $i " x 5 });
	$item{n} = { N => "$i" } if $i % 2 == 0;
	my $sql = "BEGIN;\nSELECT dynindex.api('PutItem', '" . encode_json({ TableName => 'Thread', Item => \%item }) . "') IS NOT NULL AS ok \\gset\n";
	if ($i > 1)
	{
		my $p = $i - 1;
		$sql .= "SELECT dynindex.api('UpdateItem', '" . encode_json({ TableName => 'Thread',
				Key => { f => { S => "F" . ($p % 3) }, s => { S => sprintf('w%d-%08d', $s, $p) } },
				UpdateExpression => 'SET t = :t, body = :b',
				ExpressionAttributeValues => { ':t' => { S => sprintf('2016-%08d', $p) }, ':b' => { S => "moved" } } })
		  . "') IS NOT NULL AS ok \\gset\n";
	}
	if ($i > 2 && $i % 3 == 0)
	{
		my $p = $i - 2;
		$sql .= "SELECT dynindex.api('DeleteItem', '" . encode_json({ TableName => 'Thread',
				Key => { f => { S => "F" . ($p % 3) }, s => { S => sprintf('w%d-%08d', $s, $p) } } })
		  . "') IS NOT NULL AS ok \\gset\n";
	}
	return $sql . "COMMIT;\n\\echo ACK $s $i\n";
}

my (@h, @out, @err);
for my $s (1 .. $SESSIONS)
{
	my $file = $node->basedir . "/writer$s.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh step_sql($s, $_) for 1 .. $PER_SESSION;
	close $fh;
	my ($stdout, $stderr) = ('', '');
	push @out, \$stdout;
	push @err, \$stderr;
	push @h, IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
}

# Highest acknowledged step of writer s.
sub acked_max
{
	my ($s) = @_;
	my $max = 0;
	while (${ $out[ $s - 1 ] } =~ /^ACK \Q$s\E (\d+)$/mg) { $max = $1 if $1 > $max; }
	return $max;
}

my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (1)
{
	eval { $_->pump_nb; 1 } for @h;
	my $min = 1e9;
	for my $s (1 .. $SESSIONS) { my $n = acked_max($s); $min = $n if $n < $min; }
	last if $min >= $MIN_ACKED;
	if (time > $deadline || grep { !$_->pumpable } @h)
	{
		diag('writer ' . ($_ + 1) . ' stderr: ' . substr(${ $err[$_] }, 0, 2000)) for 0 .. $#err;
		BAIL_OUT("writers did not get $MIN_ACKED commits each acknowledged (min $min)");
	}
	usleep(20_000);
}

# ---- crash: SIGKILL the postmaster and every child, at once ----
ok(crash_node($node), 'postmaster and backends are gone');
for my $h (@h) { eval { $h->finish; 1 } or diag("writer: $@"); }
my %acked = map { $_ => acked_max($_) } 1 .. $SESSIONS;
note("acknowledged steps before the crash: " . join(', ', map { "writer $_: $acked{$_}" } 1 .. $SESSIONS));

# ---- restart (crash recovery) ----
$node->start;
ok(1, 'restarted after kill -9');

# Every LSI matches the table exactly.
my $verify = $node->safe_psql('postgres',
	"SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), '; ' ORDER BY index_name) FROM dynindex.verify_indexes('Thread')");
is($verify, 'byN 0 0 0; byT 0 0 0; byT2 0 0 0', 'every LSI is consistent after recovery (verify_indexes all zeros)');

my $count = $node->safe_psql('postgres', "SELECT count(*) FROM dynindex.indexes WHERE table_name = 'Thread'");
is($count, 3, 'three LSIs');
my $items = $node->safe_psql('postgres', "SELECT (dynindex.api('DescribeTable', '{\"TableName\":\"Thread\"}') -> 'Table' ->> 'ItemCount')::int");
cmp_ok($items, '>', 0, "the table has $items items");

# The last acknowledged step of each writer is visible through the LSI: item i
# (put at step i) is found on byT by its t with a strongly consistent Query
# (under 2016-i if step i+1 committed without its acknowledgement reaching us).
for my $s (1 .. $SESSIONS)
{
	my $i = $acked{$s};
	my @subjects;
	for my $year (2015, 2016)
	{
		my $q = encode_json({ TableName => 'Thread', IndexName => 'byT', ConsistentRead => JSON::PP::true,
			KeyConditionExpression => 'f = :f AND t = :t',
			ExpressionAttributeValues => { ':f' => { S => "F" . ($i % 3) }, ':t' => { S => sprintf('%d-%08d', $year, $i) } } });
		my $r = decode_json($node->safe_psql('postgres', "SELECT dynindex.api('Query', '$q')"));
		push @subjects, map { $_->{s}{S} } @{ $r->{Items} // [] };
	}
	ok((grep { $_ eq sprintf('w%d-%08d', $s, $i) } @subjects), "writer $s: last acknowledged put (step $i) is in the LSI");
}

# The index keeps working after recovery.
$node->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"f":{"S":"F0"},"s":{"S":"after"},"t":{"S":"2020"},"n":{"N":"1"}}}')});
$verify = $node->safe_psql('postgres',
	"SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), '; ' ORDER BY index_name) FROM dynindex.verify_indexes('Thread')");
is($verify, 'byN 0 0 0; byT 0 0 0; byT2 0 0 0', 'still consistent after a write following recovery');

$node->stop;
done_testing();
