# DynCrash — shared by the crash tests (test/t/*_crash.pl): kill -9 a node's
# postmaster and every one of its children at once, as a machine crash would.
package DynCrash;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(crash_node);

# Running, not dead and not a zombie waiting to be reaped.
# The state and start time (fields 3 and 22 of /proc/PID/stat) of process $p,
# or () when there is none.  A PID is known by its start time as well: with
# pid_max at 32768 and tests starting thousands of processes, a killed
# child's PID can belong to a new process a second later.
sub _proc
{
	my ($p) = @_;
	open(my $fh, '<', "/proc/$p/stat") or return ();
	my $stat = <$fh> // '';
	close $fh;
	return () unless $stat =~ /^\d+ \(.*\) (\S) (.*)$/;
	my ($state, @f) = ($1, split / /, $2);
	return ($state, $f[18]);    # field 22: the fields after the state start at 4
}

# Is process $p, started at $start, still there: running, or also as a zombie?
sub _alive
{
	my ($p, $start, $zombie_too) = @_;
	my ($state, $now) = _proc($p);
	return defined $now && $now eq $start && ($zombie_too || $state ne 'Z');
}

sub crash_node
{
	my ($node) = @_;
	my $pm = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	my @children;
	my %start;

	opendir(my $proc, '/proc') or die "no /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		push @children, $p if defined $stat && $stat =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
	}
	closedir $proc;
	$start{$_} = (_proc($_))[1] // '' for ($pm, @children);
	note("killing postmaster $pm and " . scalar(@children) . " children with SIGKILL");
	kill 'KILL', $pm, @children;
	$node->{_pid} = undef;    # Cluster.pm must not try to stop it

	for (1 .. 600)
	{
		last unless grep { _alive($_, $start{$_}) } ($pm, @children);
		usleep(50_000);
	}
	# A restarting postmaster refuses a lock file whose PID still exists (a
	# zombie): wait for the reaper, as a restart after a real crash would, and
	# if nobody reaps it, remove the lock files it left.
	for (1 .. 600)
	{
		last unless _alive($pm, $start{$pm}, 1);
		usleep(50_000);
	}
	if (_alive($pm, $start{$pm}, 1))
	{
		note("postmaster $pm is a zombie nobody reaps; removing its lock files");
		unlink($node->data_dir . '/postmaster.pid');
		unlink(glob($node->host . '/.s.PGSQL.' . $node->port . '.lock'));
	}
	return !(grep { _alive($_, $start{$_}) } ($pm, @children));
}

1;
