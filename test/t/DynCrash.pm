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
sub _alive
{
	my ($p) = @_;
	open(my $fh, '<', "/proc/$p/stat") or return 0;
	my $stat = <$fh> // '';
	close $fh;
	return $stat !~ /^\d+ \(.*\) Z /;
}

# SIGKILL the postmaster and all its children together, wait until they are
# gone, and leave the node ready for $node->start (crash recovery).  Returns
# true when none of them is left running.
sub crash_node
{
	my ($node) = @_;
	my $pm = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	my @children;

	opendir(my $proc, '/proc') or die "no /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		push @children, $p if defined $stat && $stat =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
	}
	closedir $proc;
	note("killing postmaster $pm and " . scalar(@children) . " children with SIGKILL");
	kill 'KILL', $pm, @children;
	$node->{_pid} = undef;    # Cluster.pm must not try to stop it

	for (1 .. 600)
	{
		last unless grep { _alive($_) } ($pm, @children);
		usleep(50_000);
	}
	# A restarting postmaster refuses a lock file whose PID still exists (a
	# zombie): wait for the reaper, as a restart after a real crash would, and
	# if nobody reaps it, remove the lock files it left.
	for (1 .. 600)
	{
		last unless -e "/proc/$pm";
		usleep(50_000);
	}
	if (-e "/proc/$pm")
	{
		note("postmaster $pm is a zombie nobody reaps; removing its lock files");
		unlink($node->data_dir . '/postmaster.pid');
		unlink(glob($node->host . '/.s.PGSQL.' . $node->port . '.lock'));
	}
	return !(grep { _alive($_) } ($pm, @children));
}

1;
