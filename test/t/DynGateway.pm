# DynGateway — shared by the gateway TAP tests (040, 041, 042, 093): the
# tree's dynindex-gateway (else the installed one) started on a free port.
package DynGateway;

use strict;
use Cwd ();
use warnings;
use Exporter 'import';
use IPC::Run;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(start_gateway);

# start_gateway(\$out, \$err, @args): the IPC::Run handle of
# `dynindex-gateway --port 0 @args` (stdout into $out, stderr into $err), the
# API port it printed and, with --metrics-port, the metrics port (undef when
# not printed within 30 s).
sub start_gateway
{
	my ($out, $err, @args) = @_;
	# prove runs in the tree (PGXS: cd $(srcdir)); TESTDIR is gone in PostgreSQL 17
	my $bin = Cwd::getcwd() . "/src/gateway/dynindex-gateway";
	$bin = 'dynindex-gateway' unless -x $bin;    # the installed one, in bindir
	my $metrics = grep { $_ eq '--metrics-port' } @args;
	my $h = IPC::Run::start([ $bin, '--port', '0', @args ], '>', $out, '2>', $err);
	my $deadline = time + 30;

	while (time < $deadline
		&& ($$out !~ m{listening on http://[^:]+:\d+} || ($metrics && $$out !~ m{metrics on http://[^:]+:\d+})))
	{
		$h->pump_nb;
		usleep(50_000);
	}
	my ($port) = $$out =~ m{listening on http://[^:]+:(\d+)};
	my ($mport) = $$out =~ m{metrics on http://[^:]+:(\d+)};
	return ($h, $port, $mport);
}

1;
