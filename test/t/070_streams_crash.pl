# Crash safety of stream records: writers change items of a table with a
# NEW_AND_OLD_IMAGES stream (INSERT, MODIFY, REMOVE, each in its own
# transaction) while a consumer reads the stream below
# dynindex.stream_read_horizon(); kill -9 the server, restart, and prove that
# the stream holds exactly the acknowledged changes (plus at most the one in
# flight per writer), once each, in each writer's order, and that the consumer
# neither skipped nor repeated a record.
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

my $SESSIONS    = 2;       # concurrent writers
my $PER_SESSION = 20000;   # more than they write before the crash
my $MIN_ACKED   = 300;     # crash once each writer has this many commits acknowledged
my $ITEMS       = 3;       # items per writer

my $node = PostgreSQL::Test::Cluster->new('streams_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
  if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
# Crash-safety needs real WAL flushes at commit; Cluster.pm defaults to fsync=off.
$node->append_conf('postgresql.conf', "fsync = on\nlog_statement = none\n");
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Feed","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"BillingMode":"PAY_PER_REQUEST","StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}')});
# the consumer's position and what it read (committed with each read)
$node->safe_psql('postgres', q{
CREATE TABLE consumer_pos (pos bigint);
INSERT INTO consumer_pos VALUES (0);
CREATE TABLE consumed (seq bigint);
CREATE FUNCTION consume() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  h bigint := dynindex.stream_read_horizon();
  p bigint;
  n bigint;
BEGIN
  SELECT pos INTO p FROM consumer_pos FOR UPDATE;
  INSERT INTO consumed SELECT seq FROM dynindex.stream_records WHERE seq >= p AND seq < h;
  GET DIAGNOSTICS n = ROW_COUNT;
  UPDATE consumer_pos SET pos = h;
  RETURN n;
END $$;
});

# Writer s, operation i (1-based) works on item k = i % ITEMS in phase j = int((i-1) / ITEMS):
# phases 0,1,2 of every 4 put n = i (INSERT, then MODIFY), phase 3 deletes it (REMOVE).
sub op_of
{
	my ($s, $i) = @_;
	my $k = $i % $ITEMS;
	my $j = int(($i - 1) / $ITEMS) % 4;
	my $event = $j == 0 ? 'INSERT' : $j == 3 ? 'REMOVE' : 'MODIFY';
	return ($k, $event);
}

sub op_sql
{
	my ($s, $i) = @_;
	my ($k, $event) = op_of($s, $i);
	my $key = { pk => { S => "W$s" }, sk => { N => "$k" } };
	my ($op, $req);
	if ($event eq 'REMOVE')
	{
		($op, $req) = ('DeleteItem', { TableName => 'Feed', Key => $key });
	}
	else
	{
		($op, $req) = ('UpdateItem', { TableName => 'Feed', Key => $key,
			UpdateExpression => 'SET n = :n', ExpressionAttributeValues => { ':n' => { N => "$i" } } });
	}
	my $json = encode_json($req);
	# "ACK s i" is printed only after COMMIT returned.
	return "BEGIN;\nSELECT dynindex.api('$op', '$json') IS NOT NULL AS ok \\gset\nCOMMIT;\n\\echo ACK $s $i\n";
}

my (@h, @out, @err);
for my $s (1 .. $SESSIONS)
{
	my $file = $node->basedir . "/writer$s.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh op_sql($s, $_) for 1 .. $PER_SESSION;
	close $fh;
	my ($stdout, $stderr) = ('', '');
	push @out, \$stdout;
	push @err, \$stderr;
	push @h, IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
}
# the consumer: reads in a loop, one transaction per read
{
	my $file = $node->basedir . "/consumer.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh "SELECT consume() \\gset\nSELECT pg_sleep(0.005) \\gset\n" for 1 .. 100000;
	close $fh;
	my ($stdout, $stderr) = ('', '');
	push @h, IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
}

sub acked
{
	my ($s) = @_;
	my %a;
	$a{$1} = 1 while ${ $out[ $s - 1 ] } =~ /^ACK \Q$s\E (\d+)$/mg;
	return \%a;
}

my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (1)
{
	eval { $_->pump_nb; 1 } for @h;
	my $min = 1e9;
	for my $s (1 .. $SESSIONS) { my $n = keys %{ acked($s) }; $min = $n if $n < $min; }
	last if $min >= $MIN_ACKED;
	if (time > $deadline || grep { !$_->pumpable } @h[ 0 .. $SESSIONS - 1 ])
	{
		diag('writer ' . ($_ + 1) . ' stderr: ' . substr(${ $err[$_] }, 0, 2000)) for 0 .. $#err;
		BAIL_OUT("writers did not get $MIN_ACKED commits each acknowledged (min $min)");
	}
	usleep(20_000);
}

ok(crash_node($node), 'postmaster and backends are gone');
for my $h (@h) { eval { $h->finish; 1 }; }
my %acked;
$acked{$_} = acked($_) for 1 .. $SESSIONS;

$node->start;
ok(1, 'restarted after kill -9');

# ---- the stream holds exactly the acknowledged changes, in order ----
for my $s (1 .. $SESSIONS)
{
	my @ids = sort { $a <=> $b } keys %{ $acked{$s} };
	my $max = @ids ? $ids[-1] : 0;
	is(scalar(@ids), $max, "writer $s: acknowledged operations are 1..$max");
	my @recs = split /\n/, $node->safe_psql('postgres', qq{
		SELECT event_name || ' ' || (keys -> 'sk' ->> 'N') || ' ' || coalesce(new_image -> 'n' ->> 'N', '-')
		       || ' ' || coalesce(old_image -> 'n' ->> 'N', '-')
		FROM dynindex.stream_records WHERE keys -> 'pk' ->> 'S' = 'W$s' ORDER BY seq});
	my $n = scalar(@recs);
	ok($n == $max || $n == $max + 1,
		"writer $s: $n records for $max acknowledged operations (at most one more, in flight at the crash)");
	my $bad = 0;
	my %last;    # item -> n of its previous change (its old image)
	for my $i (1 .. $n)
	{
		my ($k, $event) = op_of($s, $i);
		my $old = $event eq 'INSERT' ? '-' : $last{$k};
		my $new = $event eq 'REMOVE' ? '-' : $i;
		my $want = "$event $k $new $old";
		if ($recs[ $i - 1 ] ne $want)
		{
			$bad++;
			diag("writer $s record $i: got '$recs[$i - 1]', want '$want'") if $bad <= 5;
		}
		$last{$k} = $new;
	}
	is($bad, 0, "writer $s: one record per operation, in the writer's order, with the right images");
}

# ---- the consumer neither skipped nor repeated a record ----
my ($pos, $consumed, $distinct, $below) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (SELECT pos FROM consumer_pos), (SELECT count(*) FROM consumed), (SELECT count(DISTINCT seq) FROM consumed),
	       (SELECT count(*) FROM dynindex.stream_records WHERE seq < (SELECT pos FROM consumer_pos))});
note("consumer: position $pos, $consumed records read");
ok($consumed > 0, 'the consumer read records while the writers ran');
is($distinct, $consumed, 'the consumer read no record twice');
is($consumed, $below, 'the consumer read every record below its position (none skipped)');
is($node->safe_psql('postgres', q{SELECT count(*) FROM dynindex.stream_records r
	WHERE r.seq < (SELECT pos FROM consumer_pos) AND NOT EXISTS (SELECT 1 FROM consumed c WHERE c.seq = r.seq)}),
	'0', 'no record below the position is missing from what the consumer read');

# ---- after recovery: everything is settled, and the stream goes on ----
my $h = $node->safe_psql('postgres', 'SELECT dynindex.stream_read_horizon()');
my $maxseq = $node->safe_psql('postgres', 'SELECT coalesce(max(seq), 0) FROM dynindex.stream_records');
ok($h > $maxseq, 'after recovery the horizon is past every record');
$node->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Feed","Item":{"pk":{"S":"AFTER"},"sk":{"N":"1"}}}')});
is($node->safe_psql('postgres', q{SELECT count(*) FROM dynindex.stream_records WHERE keys -> 'pk' ->> 'S' = 'AFTER' AND seq > } . $maxseq),
	'1', 'a write after recovery gets a record with a larger sequence number');

$node->stop;
done_testing();
