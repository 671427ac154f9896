# Many idle keep-alive connections (functional, no timing): with
# --max-connections 1000, 2,000 clients connect one after another and each
# makes a request and stays idle.  Every new client is served (never reset):
# the gateway closes the connection idle longest instead.  Afterwards the
# newest 1,000 connections still work, the oldest were closed cleanly, and new
# clients keep being served while 1,000 idle connections are held.
use strict;
use warnings;
# 2,000 sockets need more than the usual soft limit of 1024 open files: raise
# it to the hard limit by running this script again under `ulimit -n` (before
# PostgreSQL::Test::Utils takes over STDOUT).
BEGIN
{
	if (!$ENV{DYNINDEX_NOFILE_RAISED})
	{
		my $soft = `sh -c 'ulimit -n'`;
		chomp $soft;
		if ($soft ne 'unlimited' && $soft < 4500)
		{
			$ENV{DYNINDEX_NOFILE_RAISED} = 1;
			exec('/bin/sh', '-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', 'sh',
				$^X, (map { "-I$_" } grep { !ref } @INC), $0, @ARGV);
		}
	}
}
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use IPC::Run;
use IO::Socket::INET;
use Time::HiRes qw(time usleep);

my $soft_now = `sh -c 'ulimit -n'`;
chomp $soft_now;
plan skip_all => "the open-file limit ($soft_now) is too low for 2,000 connections"
  if $soft_now ne 'unlimited' && $soft_now < 4500;

my $limit = 1000;
my $clients = 2000;

my $node = PostgreSQL::Test::Cluster->new('conns');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my ($out, $err) = ('', '');
my ($gw, $port, $mport) = start_gateway(\$out, \$err, '--dev', '--pool-size', '2', '--max-connections', $limit,
	'--metrics-port', '0', '--dbname', $node->connstr('postgres'));
# a failing test must not leave the gateway running
END { local $?; $gw->kill_kill if $gw && $gw->pumpable; }
ok($port && $mport, 'the gateway started') or BAIL_OUT("gateway did not start: $out $err");

# One request on socket $s; returns the HTTP status (0: no answer) and body.
sub request
{
	my ($s, $op, $body, $p) = @_;
	my $req;
	if (defined $op)
	{
		$req = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
		  . "X-Amz-Target: DynamoDB_20120810.$op\r\nContent-Length: " . length($body) . "\r\n\r\n$body";
	}
	else
	{
		$req = "GET " . ($body // '/') . " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	}
	return (0, '') unless defined syswrite($s, $req);
	my $buf = '';
	my $t0 = time;
	while (time - $t0 < 30)
	{
		my $n = sysread($s, $buf, 65536, length($buf));
		return (0, '') unless $n;
		if ($buf =~ /\r\n\r\n/)
		{
			my $hl = index($buf, "\r\n\r\n") + 4;
			my ($cl) = $buf =~ /Content-Length: (\d+)/i;
			last if length($buf) >= $hl + ($cl // 0);
		}
	}
	my ($status) = $buf =~ m{^HTTP/1\.1 (\d+)};
	my ($b) = $buf =~ m{\r\n\r\n(.*)$}s;
	return ($status // 0, $b // '');
}

sub connect_gw
{
	my ($p) = @_;
	return IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p // $port, Proto => 'tcp', Timeout => 10);
}

my @socks;
my ($served, $failed) = (0, 0);
for my $i (1 .. $clients)
{
	my $s = connect_gw();
	if (!$s)
	{
		$failed++;
		next;
	}
	my ($st) = request($s, 'ListTables', '{}');
	if ($st == 200) { $served++ } else { $failed++ }
	push @socks, $s;
}
is($served, $clients, "$clients clients connected one after another and each was served");
is($failed, 0, '  ... none was refused or reset');

# The newest connections (idle now) still work; the oldest were closed by the gateway.
my $newest_ok = 0;
for my $s (@socks[ $clients - 100 .. $clients - 1 ])
{
	my ($st) = request($s, 'ListTables', '{}');
	$newest_ok++ if $st == 200;
}
is($newest_ok, 100, 'the 100 newest idle connections are still open and answer');
my $oldest_closed = 0;
for my $s (@socks[ 0 .. 99 ])
{
	my $buf;
	my $n = sysread($s, $buf, 1);
	$oldest_closed++ if defined $n && $n == 0;    # a clean close (FIN), not a reset
}
is($oldest_closed, 100, 'the 100 oldest idle connections were closed cleanly');

# More new clients while the limit is full of idle connections: all served.
my $more_ok = 0;
for my $i (1 .. 200)
{
	my $s = connect_gw();
	next unless $s;
	my ($st) = request($s, 'ListTables', '{}');
	$more_ok++ if $st == 200;
	close($s);
}
is($more_ok, 200, 'with the limit full of idle connections, 200 new clients are served');

my $m = connect_gw($mport);
my ($mst, $metrics) = request($m, undef, '/metrics');
is($mst, 200, 'metrics endpoint answers');
my ($evicted) = $metrics =~ /^dynindex_gateway_connections_evicted_total (\d+)$/m;
my ($open) = $metrics =~ /^dynindex_gateway_connections (\d+)$/m;
cmp_ok($evicted, '>=', $clients - $limit, "metrics: at least @{[ $clients - $limit ]} idle connections evicted");
cmp_ok($open, '<=', $limit + 1, 'metrics: open connections within the limit');
close($_) for @socks;

ok($gw->pumpable, 'the gateway is still running');
$gw->signal('TERM');
$gw->finish;
$node->stop;
done_testing();
