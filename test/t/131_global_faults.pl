# Global tables under faults (docs/global-tables.md): two regions take 8
# writers (4 on each side: puts, counter updates and deletes over 200 keys)
# while one server is killed with SIGKILL (its postmaster and every child at
# once, test/t/DynCrash.pm) and restarted, then while the other is; then one
# region is stopped for a while as the other takes writes; then the link
# between them is cut while both take writes.  After each fault both regions
# converge to the same items, and the GSI of each verifies.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use DynGlobal;

my ($east, $west) = global_pair('f');

my $script = "$PostgreSQL::Test::Utils::tmp_check/global_load.sql";
open(my $fh, '>', $script) or die;
print $fh <<'SQL';
\set k random(1, 200)
\set v random(1, 1000000)
\set d random(1, 10)
SELECT CASE
  WHEN :d = 1 THEN dynindex.api('DeleteItem', jsonb_build_object('TableName', 'Glob', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'))))
  WHEN :d <= 3 THEN dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Glob', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1')),
    'UpdateExpression', 'ADD n :one SET g = :g', 'ExpressionAttributeValues',
    jsonb_build_object(':one', jsonb_build_object('N', '1'), ':g', jsonb_build_object('S', 'g' || (:k % 7)))))
  ELSE dynindex.api('PutItem', jsonb_build_object('TableName', 'Glob', 'Item',
    jsonb_build_object('pk', jsonb_build_object('S', 'p' || :k), 'sk', jsonb_build_object('N', '1'),
      'g', jsonb_build_object('S', 'g' || (:k % 7)), 'v', jsonb_build_object('N', :v::text))))
END;
SQL
close($fh);

# 4 writers on $n for $secs seconds, in the background (a killed server ends them early).
sub load
{
	my ($n, $secs) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start([ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', $secs, '-f', $script,
		'-h', $n->host, '-p', $n->port, 'postgres' ], '>', \$out, '2>', \$err);
}

# Both regions hold the same items, and each GSI verifies.
sub check
{
	my ($what) = @_;
	ok(converged($east, $west, 120), "$what: both regions hold the same items");
	for my $n ($east, $west)
	{
		$n->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Glob', '60 seconds')});
		is($n->safe_psql('postgres', q{SELECT count(*) FROM dynindex.verify_indexes('Glob') WHERE missing + extra + stale > 0}),
			'0', "$what: the GSI of " . $n->name . ' verifies');
	}
}

for my $victim ($east, $west)
{
	my @h = (load($east, 8), load($west, 8));
	sleep 3;
	ok(crash_node($victim), 'SIGKILL of ' . $victim->name . ' and every process of it');
	$victim->start;
	$_->finish for @h;
	check('SIGKILL of ' . $victim->name . ' under 8 writers');
}
ok(items($east) ne '', 'the table has items');

# a partition: eu-west-1 away for a while, us-east-1 goes on taking writes
$west->stop('fast');
my $h = load($east, 5);
$h->finish;
$west->start;
check('eu-west-1 stopped while us-east-1 took writes');

# a partition of the link, both regions up and writing: each region's apply
# worker is cut off (its region's connection string points nowhere, the
# running one is ended), 8 writers write the same keys on both sides, then
# the link comes back: last writer wins settles every key the same way
sub set_link
{
	my ($n, $region, $other, $up) = @_;
	(my $conninfo = $up ? $other->connstr('postgres') : 'host=/nonexistent port=1 dbname=postgres connect_timeout=1') =~ s/'/''/g;
	$n->safe_psql('postgres', "SELECT dynindex.set_region('$region', '$conninfo')");
	$n->safe_psql('postgres', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'dynindex apply'})
	  unless $up;
}
set_link($east, 'eu-west-1', $west, 0);
set_link($west, 'us-east-1', $east, 0);
my @p = (load($east, 5), load($west, 5));
$_->finish for @p;
isnt(items($east), items($west), 'cut off from each other, the regions diverged');
set_link($east, 'eu-west-1', $west, 1);
set_link($west, 'us-east-1', $east, 1);
check('a partition of the link with both regions writing');

done_testing();
