# Orphaned workers: kill -9 of the postmaster ALONE (its children live on, as
# when only the postmaster is OOM-killed) during a large GSI backfill and
# during sustained GSI apply.  Every child, the dynindex worker included,
# must notice the postmaster's death and exit within seconds: one that keeps
# running holds the shared memory, and the restart fails with "pre-existing
# shared memory block is still in use".  The tests show that the worker
# stopped at once (after a restart without the worker, the backfill is still
# unfinished and the queue not yet drained), that PostgreSQL restarts within
# seconds, and that the indexes then finish and verify clean.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $ITEMS = 60000;
my $EXIT_WITHIN = 5;    # seconds for every orphaned child to exit

my $node = PostgreSQL::Test::Cluster->new('postmaster_death');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nlog_statement = none\n");
# small chunks and batches: the worker stays busy (no waits) for a long time
$node->append_conf('postgresql.conf', "dynindex.backfill_chunk_size = 50\ndynindex.gsi_batch_size = 20\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

# Running, not dead and not a zombie.
sub alive
{
	my ($p) = @_;
	open(my $fh, '<', "/proc/$p/stat") or return 0;
	my $stat = <$fh> // '';
	close $fh;
	return $stat !~ /^\d+ \(.*\) Z /;
}

# The postmaster's children, by pid => command line.
sub children
{
	my ($pm) = @_;
	my %c;
	opendir(my $proc, '/proc') or die "no /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat && $stat =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
		my $cmd = '';
		if (open(my $cf, '<', "/proc/$p/cmdline")) { local $/; $cmd = <$cf> // ''; close $cf; }
		$cmd =~ s/\0/ /g;
		$c{$p} = $cmd;
	}
	closedir $proc;
	return %c;
}

# kill -9 the postmaster only; returns the seconds until its last child exited
# (undef if some child was still running after 60 s) and the list of children
# seen running after $EXIT_WITHIN seconds.
sub kill_postmaster_only
{
	my ($node) = @_;
	my $pm = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	my %kids = children($pm);
	my @workers = grep { $kids{$_} =~ /dynindex worker/ } keys %kids;
	note("killing postmaster $pm only; children: " . join(', ', map { "$_ ($kids{$_})" } sort keys %kids));
	ok(scalar(@workers) >= 1, 'a dynindex worker is running');
	my $t0 = time;
	kill 'KILL', $pm;
	$node->{_pid} = undef;    # Cluster.pm must not try to stop it
	my (@late, $gone);
	while (time - $t0 < 60)
	{
		my @left = grep { alive($_) } keys %kids;
		@late = map { "$_ ($kids{$_})" } @left if time - $t0 <= $EXIT_WITHIN;
		if (!@left) { $gone = time - $t0; last; }
		usleep(20_000);
	}
	# the dead postmaster's lock files, as a restart after a real crash finds them
	for (1 .. 200) { last unless -e "/proc/$pm" && alive($pm); usleep(50_000); }
	if (-e "/proc/$pm")
	{
		unlink($node->data_dir . '/postmaster.pid');
		unlink(glob($node->host . '/.s.PGSQL.' . $node->port . '.lock'));
	}
	# SIGKILL whatever is left, so that the test can go on (and report)
	kill 'KILL', grep { alive($_) } keys %kids;
	return ($gone, \@late);
}

sub restart_timed
{
	my ($node, $preload) = @_;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = '$preload'\n");
	my $t0 = time;
	my $ok = $node->start(fail_ok => 1);
	return $ok ? time - $t0 : undef;
}

sub api { my ($op, $req) = @_; return "SELECT dynindex.api('$op', '$req')"; }

# ---- 1. during a large backfill ----
$node->safe_psql('postgres', api('CreateTable', '{"TableName":"Big","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"BillingMode":"PAY_PER_REQUEST"}'));
$node->safe_psql('postgres', qq{SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Big', 'Item', jsonb_build_object(
	'pk', jsonb_build_object('S', 'p' || (i % 997)), 'sk', jsonb_build_object('N', i::text),
	'cat', jsonb_build_object('S', 'c' || (i % 13)), 'v', jsonb_build_object('N', (i % 101)::text)))))
  FROM generate_series(1, $ITEMS) i});
$node->safe_psql('postgres', api('UpdateTable', '{"TableName":"Big","AttributeDefinitions":[{"AttributeName":"cat","AttributeType":"S"},{"AttributeName":"v","AttributeType":"N"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byCat","KeySchema":[{"AttributeName":"cat","KeyType":"HASH"},{"AttributeName":"v","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}}]}'));
my $storage = $node->safe_psql('postgres', q{SELECT storage FROM dynindex.indexes WHERE index_name = 'byCat'});
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while ($node->safe_psql('postgres', "SELECT count(*) FROM $storage") < 2000)
{
	BAIL_OUT('the backfill did not start') if time > $deadline;
	usleep(20_000);
}
my ($gone, $late) = kill_postmaster_only($node);
ok(defined $gone && $gone <= $EXIT_WITHIN, 'backfill: every child exited within seconds of the postmaster\'s death')
  or diag('still running after ' . $EXIT_WITHIN . ' s: ' . join(', ', @$late));
note(sprintf('backfill: last child gone after %.2f s', $gone // -1));
my $secs = restart_timed($node, '');
ok(defined $secs && $secs < 30, 'backfill: PostgreSQL restarts') and note(sprintf('restart took %.2f s', $secs));
my ($status, $done) = split /\|/, $node->safe_psql('postgres',
	"SELECT status, (SELECT count(*) FROM $storage) FROM dynindex.indexes WHERE index_name = 'byCat'");
is($status, 'CREATING', 'backfill: the orphaned worker did not go on backfilling (index still CREATING)');
note("entries indexed before the crash: $done of $ITEMS");
$node->stop;
restart_timed($node, 'dynindex');
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Big', '300 seconds')}), 't', 'backfill: finished after the restart');
is($node->safe_psql('postgres', q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('Big')}),
	'byCat 0 0 0', 'backfill: the index verifies clean');

# ---- 2. during sustained GSI apply ----
# one transaction queues $ITEMS changes at once; the worker drains them in
# batches without waiting in between
$node->safe_psql('postgres', qq{SELECT count(dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Big',
	'Key', jsonb_build_object('pk', jsonb_build_object('S', 'p' || (i % 997)), 'sk', jsonb_build_object('N', i::text)),
	'UpdateExpression', 'SET cat = :c', 'ExpressionAttributeValues', jsonb_build_object(':c', jsonb_build_object('S', 'd' || (i % 7))))))
  FROM generate_series(1, $ITEMS) i});
my $queued = $node->safe_psql('postgres', 'SELECT count(*) FROM dynindex.gsi_changes');
$deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while ($node->safe_psql('postgres', 'SELECT count(*) FROM dynindex.gsi_changes') > $queued - 2000)
{
	BAIL_OUT('the worker does not apply') if time > $deadline;
	usleep(20_000);
}
($gone, $late) = kill_postmaster_only($node);
ok(defined $gone && $gone <= $EXIT_WITHIN, 'apply: every child exited within seconds of the postmaster\'s death')
  or diag('still running after ' . $EXIT_WITHIN . ' s: ' . join(', ', @$late));
note(sprintf('apply: last child gone after %.2f s', $gone // -1));
$secs = restart_timed($node, '');
ok(defined $secs && $secs < 30, 'apply: PostgreSQL restarts') and note(sprintf('restart took %.2f s', $secs));
my $left = $node->safe_psql('postgres', 'SELECT count(*) FROM dynindex.gsi_changes');
note("changes queued: $queued, left after the crash: $left");
ok($left > 0, 'apply: the orphaned worker did not go on applying (changes still queued)');
$node->stop;
restart_timed($node, 'dynindex');
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Big', '300 seconds')}), 't', 'apply: queue drained after the restart');
is($node->safe_psql('postgres', q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('Big')}),
	'byCat 0 0 0', 'apply: the index verifies clean');
$node->stop;
done_testing();
