# The gateway while PostgreSQL is down (issue #23 item 7), with several
# requests waiting at once: every request fails at once with
# InternalServerError (none waits for --request-timeout), the outage is
# logged once when it starts and once when it ends (no line per connection
# attempt), and after the server is back every request succeeds.  For a clean
# stop and for kill -9 of the postmaster.  Counts of answers and log lines
# only: no timing assertions.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(usleep);

my $CLIENTS = 4;
my $REQUESTS = 10;    # per client and outage

my $node = PostgreSQL::Test::Cluster->new('gateway_outage');
$node->init;
# TCP: a refused connection fails asynchronously there (a Unix socket refuses at once),
# so attempts overlap: the case that made the gateway spin
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nlisten_addresses = '127.0.0.1'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my ($out, $err) = ('', '');
my ($gw, $port, $mport) = start_gateway(\$out, \$err, '--dev', '--pool-size', '4', '--request-timeout', '5',
	'--metrics-port', '0', '--dbname', 'host=127.0.0.1 port=' . $node->port . ' dbname=postgres');
END { local $?; $gw->kill_kill if $gw && $gw->pumpable; }
ok($port && $mport, 'the gateway started') or BAIL_OUT("gateway did not start: $out $err");
my $gw_pid = $gw->{KIDS}[0]{PID};

sub call
{
	my ($http, $op, $body) = @_;
	my $r = $http->post("http://127.0.0.1:$port/", {
		headers => { 'Content-Type' => 'application/x-amz-json-1.0', 'X-Amz-Target' => "DynamoDB_20120810.$op" },
		content => encode_json($body) });
	my $j = eval { decode_json($r->{content}) } // {};
	my ($type) = ($j->{__type} // '') =~ /#(\w+)$/;
	return ($r->{status}, $type // '');
}

# A metric of the gateway (the sum over its label sets).
sub metric
{
	my ($name) = @_;
	my $r = HTTP::Tiny->new(timeout => 30)->get("http://127.0.0.1:$mport/metrics");
	my $sum = 0;
	$sum += $1 while $r->{content} =~ /^\Q$name\E(?:\{[^}]*\})? (\S+)$/mg;
	return $sum;
}

# CPU seconds the gateway used so far (reported, not asserted).
sub gw_cpu
{
	my @f = split / /, (slurp_file("/proc/$gw_pid/stat") =~ s/^.*\) //sr);
	return ($f[11] + $f[12]) / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

# The gateway's log since offset $from (it logs to stderr).
sub gw_log_since
{
	my ($from) = @_;
	$gw->pump_nb;
	return substr($err, $from);
}

my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
my $get = { TableName => 'Things', Key => { pk => { S => 'a' } } };
my ($st) = call($http, 'CreateTable', {
	TableName => 'Things', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' } ] });
is($st, 200, 'CreateTable');
($st) = call($http, 'PutItem', { TableName => 'Things', Item => { pk => { S => 'a' } } });
is($st, 200, 'PutItem');

for my $how ('fast stop', 'kill -9')
{
	# open every pooled connection, so that each of them is lost
	my @kids;
	for (1 .. $CLIENTS)
	{
		my $pid = fork // die "fork: $!";
		if ($pid == 0)
		{
			my $h = HTTP::Tiny->new(timeout => 30);
			call($h, 'GetItem', $get) for 1 .. 3;
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	waitpid($_, 0) for @kids;

	my $log_from = length($err);
	my $timeouts = metric('dynindex_gateway_request_timeouts_total');
	my $cpu = gw_cpu();
	if ($how eq 'kill -9')
	{
		my @backends = split /\n/, $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()');
		$node->kill9;
		# the orphaned backends leave when they notice the postmaster's death
		usleep(100_000) while grep { kill 0, $_ } @backends;
	}
	else
	{
		$node->stop('fast');
	}

	# $CLIENTS clients at once, $REQUESTS requests each, while the server is down
	pipe(my $rd, my $wr) or die "pipe: $!";
	@kids = ();
	for (1 .. $CLIENTS)
	{
		my $pid = fork // die "fork: $!";
		if ($pid == 0)
		{
			close $rd;
			my $h = HTTP::Tiny->new(timeout => 20, keep_alive => 1);
			for (1 .. $REQUESTS)
			{
				my ($s, $t) = call($h, 'GetItem', $get);
				syswrite($wr, "$s $t\n");
			}
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	close $wr;
	my %answers;
	while (my $line = <$rd>)
	{
		chomp $line;
		$answers{$line}++;
	}
	waitpid($_, 0) for @kids;
	is($answers{'500 InternalServerError'} // 0, $CLIENTS * $REQUESTS,
		"$how: all @{[$CLIENTS * $REQUESTS]} requests during the outage answered InternalServerError")
	  or diag(explain \%answers);
	is(metric('dynindex_gateway_request_timeouts_total') - $timeouts, 0,
		"$how: none of them waited for --request-timeout");

	my $down_log = gw_log_since($log_from);
	my @lines = split /\n/, $down_log;
	my $outage_lines = grep { /cannot connect to PostgreSQL/ } @lines;
	is($outage_lines, 1, "$how: the outage is logged once");
	cmp_ok(scalar(@lines), '<=', 4 + 1,
		"$how: at most one line per lost connection (pool of 4) and the outage's")
	  or diag(join("\n", @lines[0 .. ($#lines < 20 ? $#lines : 20)]));
	note(sprintf('%s: the gateway used %.2f CPU-seconds during the outage', $how, gw_cpu() - $cpu));

	$log_from = length($err);
	$node->start;
	my $ok = 0;
	for (1 .. 8)
	{
		($st) = call($http, 'GetItem', $get);
		$ok++ if $st == 200;
	}
	is($ok, 8, "$how: after the restart every request succeeds");
	my $back = () = gw_log_since($log_from) =~ /connected to PostgreSQL again/g;
	is($back, 1, "$how: the end of the outage is logged once");
}

ok($gw->pumpable, 'the gateway is still running');
$gw->signal('TERM');
$gw->finish;
$node->stop;
done_testing();
