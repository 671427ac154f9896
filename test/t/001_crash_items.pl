# Crash safety of item writes: kill -9 the postmaster (and its backends, as a
# machine crash would) while sessions are writing items with PutItem, restart,
# and check that every item whose COMMIT was acknowledged is there and intact.
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

my $SESSIONS     = 2;       # concurrent writers
my $PER_SESSION  = 20000;   # more than they write before the crash
my $MIN_ACKED    = 300;     # crash once each session has this many commits acknowledged
my $PAYLOAD      = 300;     # bytes of payload per item

my $node = PostgreSQL::Test::Cluster->new('crash_items');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
  if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
# Crash-safety needs real WAL flushes at commit; Cluster.pm defaults to fsync=off.
$node->append_conf('postgresql.conf', "fsync = on\nlog_statement = none\n");
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Orders","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}')});

sub key_of { my ($s, $i) = @_; return ("USER#$s", sprintf('ORDER#%08d', $i)); }
sub payload_of { my ($s, $i) = @_; return substr(("s$s-i$i-" x 100), 0, $PAYLOAD); }
sub total_of { my ($i) = @_; return "$i.25"; }    # written as 000<i>.250: canonical <i>.25

sub put_sql
{
	my ($s, $i) = @_;
	my ($pk, $sk) = key_of($s, $i);
	my $item = encode_json({
		TableName => 'Orders',
		Item => {
			pk      => { S => $pk },
			sk      => { S => $sk },
			total   => { N => "000$i.250" },
			payload => { S => payload_of($s, $i) },
			tags    => { SS => [ "a$i", "b$i" ] },
		}
	});
	# Each item in its own transaction; "ACK s i" is printed only after COMMIT returned.
	return "BEGIN;\nSELECT dynindex.api('PutItem', '$item') IS NOT NULL AS ok \\gset\nCOMMIT;\n\\echo ACK $s $i\n";
}

# ---- background writers ----
my (@h, @out, @err);
for my $s (1 .. $SESSIONS)
{
	# The script is a file: psql's stdin stays closed, so when the server dies psql
	# exits cleanly and flushes every ACK line it printed.
	my $file = $node->basedir . "/writer$s.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh put_sql($s, $_) for 1 .. $PER_SESSION;
	close $fh;
	my ($stdout, $stderr) = ('', '');
	push @out, \$stdout;
	push @err, \$stderr;
	push @h, IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
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
	# A writer that died (error) makes pump_nb throw; report it below.
	eval { $_->pump_nb; 1 } for @h;
	my $min = 1e9;
	for my $s (1 .. $SESSIONS) { my $n = keys %{ acked($s) }; $min = $n if $n < $min; }
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

# The writers see the connection die; collect what they saw acknowledged.
for my $h (@h) { eval { $h->finish; 1 } or diag("writer: $@"); }
my %acked;
for my $s (1 .. $SESSIONS) { $acked{$s} = acked($s); }
my $n_acked = 0;
$n_acked += keys %{ $acked{$_} } for 1 .. $SESSIONS;
note("acknowledged commits before the crash: $n_acked");

# ---- restart (crash recovery) ----
$node->start;
ok(1, 'restarted after kill -9');

# Every acknowledged item is there and intact (one GetItem per item, in one psql call).
my (@checks, @expect);
for my $s (1 .. $SESSIONS)
{
	for my $i (sort { $a <=> $b } keys %{ $acked{$s} })
	{
		my ($pk, $sk) = key_of($s, $i);
		my $key = encode_json({ TableName => 'Orders', ConsistentRead => JSON::PP::true,
				Key => { pk => { S => $pk }, sk => { S => $sk } } });
		push @checks, "SELECT dynindex.api('GetItem', '$key');";
		push @expect, [ $s, $i ];
	}
}
my @got = split /\n/, $node->safe_psql('postgres', join("\n", @checks));
is(scalar(@got), scalar(@expect), 'one GetItem answer per acknowledged item');

my ($missing, $damaged) = (0, 0);
for my $k (0 .. $#expect)
{
	my ($s, $i) = @{ $expect[$k] };
	my ($pk, $sk) = key_of($s, $i);
	my $r = eval { decode_json($got[$k] // '') } // {};
	my $it = $r->{Item};
	if (!$it) { $missing++; diag("missing: $pk $sk") if $missing <= 10; next; }
	my $ok = ($it->{pk}{S} // '') eq $pk
	  && ($it->{sk}{S} // '') eq $sk
	  && ($it->{total}{N} // '') eq total_of($i)
	  && ($it->{payload}{S} // '') eq payload_of($s, $i)
	  && join(',', sort @{ $it->{tags}{SS} // [] }) eq join(',', sort("a$i", "b$i"))
	  && keys(%$it) == 5;
	if (!$ok) { $damaged++; diag("damaged: $pk $sk: $got[$k]") if $damaged <= 10; }
}
is($missing, 0, "all $n_acked acknowledged items survived the crash");
is($damaged, 0, 'every surviving item is intact');

# Count: each writer commits its items in order, so its acknowledged items are
# 1..max; item max+1 may exist (committed, but killed before the acknowledgement
# reached the client); nothing after it may exist.
for my $s (1 .. $SESSIONS)
{
	my @ids = sort { $a <=> $b } keys %{ $acked{$s} };
	my $max = @ids ? $ids[-1] : 0;
	is(scalar(@ids), $max, "writer $s: acknowledged items are 1..$max, without gaps");
	my @after = map {
		my ($pk, $sk) = key_of($s, $_);
		my $key = encode_json({ TableName => 'Orders', ConsistentRead => JSON::PP::true,
				Key => { pk => { S => $pk }, sk => { S => $sk } } });
		my $r = decode_json($node->safe_psql('postgres', "SELECT dynindex.api('GetItem', '$key')"));
		$r->{Item} ? 1 : 0;
	} ($max + 1 .. $max + 3);
	note("writer $s: items after the last acknowledged one: @after");
	is($after[1] + $after[2], 0, "writer $s: no item beyond the one in flight at the crash");
}

# The table still works after recovery.
$node->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"AFTER"},"sk":{"S":"CRASH"},"n":{"N":"1"}}}')});
like($node->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"AFTER"},"sk":{"S":"CRASH"}}}')}),
	qr/"CRASH"/, 'writes and reads work after recovery');

$node->stop;
done_testing();
