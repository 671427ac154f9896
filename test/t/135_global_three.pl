# Global tables with three regions (docs/global-tables.md): us-east-1,
# eu-west-1 and ap-south-1 each declare the other two and replicate table
# Glob with both (a full mesh: each region streams each other region's
# changes directly; a change applied from one region is not sent on).  8
# writers spread over the three regions (3, 3, 2) write the same 100 keys —
# puts, counter updates (ADD), deletes, TransactWriteItems — while one
# region is killed with SIGKILL (its postmaster and every child, DynCrash)
# and restarted, its writers started again; then another one is.  After
# the writers stop all three regions hold the same items (every item
# compared), every write that committed anywhere is there unless a later
# write of the same item (last writer wins) overwrote it (DynWriters: each
# write's tag and stamp logged in its own transaction), and the GSI of each
# region verifies.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use DynGlobal;
use DynWriters;

my %node = (
	'us-east-1' => region_node('east3', 'us-east-1'),
	'eu-west-1' => region_node('west3', 'eu-west-1'),
	'ap-south-1' => region_node('south3', 'ap-south-1'));
my @regions = sort keys %node;
my @nodes = map { $node{$_} } @regions;

# the full mesh: each region declares the other two and replicates Glob with them
for my $r (@regions)
{
	DynGlobal::declare($node{$r}, $_, $node{$_}) for grep { $_ ne $r } @regions;
}
for my $r (@regions)
{
	$node{$r}->safe_psql('postgres', "SELECT dynindex._replicate_table('Glob', '$_')") for grep { $_ ne $r } @regions;
}
for my $n (@nodes)
{
	ok($n->poll_query_until('postgres', q{SELECT count(*) = 2 FROM pg_replication_slots WHERE slot_name LIKE 'dynindex_%' AND active}),
		$n->name . ': both other regions stream their slot here');
	writers_setup($n);
}

# Every region holds the same items as the first one; true if so within $secs seconds.
sub all_converged
{
	my ($secs) = @_;
	for (1 .. 10 * $secs)
	{
		my $first = items($nodes[0]);
		return 1 unless grep { items($_) ne $first } @nodes[ 1 .. $#nodes ];
		usleep(100_000);
	}
	diag(join(', ', map { $_->name . ': ' . scalar(split /\n/, items($_)) . ' items' } @nodes));
	return 0;
}

# The writers of region $r: 3, 3 and 2 of the 8.
my %clients = ('ap-south-1' => 2, 'eu-west-1' => 3, 'us-east-1' => 3);

for my $victim ('eu-west-1', 'us-east-1')
{
	my $what = "SIGKILL of $victim under 8 writers in three regions";
	my %w = map { $_ => writers_start($node{$_}, $clients{$_}, 14) } @regions;
	sleep 5;
	ok(crash_node($node{$victim}), "$what: every process of it killed");
	$node{$victim}->start;
	my $again = writers_start($node{$victim}, $clients{$victim}, 5);    # it takes writes again
	for my $r (@regions)
	{
		my ($done, $errors) = writers_finish($w{$r});
		ok($done > 0, "$what: the writers of $r made writes");
		is($errors, 0, "$what: the writers of $r ran without an error") unless $r eq $victim;
	}
	my ($done, $errors) = writers_finish($again);
	ok($done > 0 && $errors == 0, "$what: $victim, restarted, takes writes again");

	ok(all_converged(180), "$what: the three regions hold the same items");
	lww_check($what, @nodes);
	for my $n (@nodes)
	{
		$n->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Glob', '60 seconds')});
		is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Glob') WHERE missing + extra + stale > 0}),
			'0', "$what: the GSI of " . $n->name . ' verifies');
	}
}

done_testing();
