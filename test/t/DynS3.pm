# DynS3: an S3-compatible server for the TAP tests (test/s3/server.js: s3rver
# from npm behind a proxy that verifies SigV4), started on a free loopback
# port.  `npm ci` installs it the first time (the npm registry is reachable
# wherever the tests run; docs/import-export.md).
package DynS3;
use strict;
use warnings;
use File::Temp qw(tempdir);
use IPC::Run;
use Time::HiRes qw(usleep);
use Test::More;

my $DIR = 'test/s3';

# Install s3rver if needed; false (with a diagnostic) when node or npm is missing.
sub install
{
	for my $tool ('node', 'npm')
	{
		if (system("command -v $tool >/dev/null 2>&1") != 0)
		{
			diag("$tool not found");
			return 0;
		}
	}
	return 1 if -d "$DIR/node_modules/s3rver";
	my $out = `cd $DIR && npm ci --no-audit --no-fund 2>&1`;
	if ($? != 0)
	{
		diag("npm ci in $DIR failed:\n$out");
		return 0;
	}
	return 1;
}

# Start a server: key, secret, buckets (array ref), options (max_keys, log).
# Returns a hash: port, endpoint, dir, log, handle.
sub start
{
	my (%o) = @_;
	my $dir = $o{dir} // tempdir(CLEANUP => 1);
	my $log = $o{log} // "$dir/requests.log";
	my @cmd = ('node', '--openssl-legacy-provider', "$DIR/server.js", '--port', $o{port} // 0,
		'--dir', "$dir/data", '--access-key', $o{key}, '--secret', $o{secret}, '--log', $log);
	push @cmd, ('--bucket', $_) for @{ $o{buckets} // [] };
	push @cmd, ('--max-keys', $o{max_keys}) if $o{max_keys};
	mkdir "$dir/data";
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start(\@cmd, \$in, \$out, \$err);
	for (my $i = 0; $i < 300 && $out !~ /READY (\d+)/; $i++)
	{
		$h->pump_nb;
		usleep(50_000);
	}
	die "S3 server did not start: $err" unless $out =~ /READY (\d+)/;
	my $port = $1;
	return { port => $port, endpoint => "http://127.0.0.1:$port", dir => $dir, log => $log,
		handle => $h, out => \$out, err => \$err, opts => \%o };
}

# Stop a server (kill -9: as a store that dies).
sub kill9
{
	my ($s) = @_;
	$s->{handle}->signal('KILL');
	eval { $s->{handle}->finish; };
}

# Set the proxy's fault mode ("drop-uploads" or "none").
sub fault
{
	my ($s, $mode) = @_;
	my $r = `curl -s '$s->{endpoint}/__test/fault?mode=$mode'`;
	return $r =~ /fault $mode/;
}

# The request log's lines.
sub requests
{
	my ($s) = @_;
	open(my $fh, '<', $s->{log}) or return ();
	my @l = <$fh>;
	close $fh;
	chomp @l;
	return @l;
}

1;
