# Eventually consistent reads on a standby, through the gateway (--standby,
# --max-standby-lag).  A primary and a streaming standby; the gateway sends
# GetItem, Query, Scan, BatchGetItem and PartiQL SELECT without ConsistentRead
# to the standby while its replay lag is within the bound, everything else to
# the primary.  Shown by pausing replay on the standby: a write made through
# the gateway is visible to strongly consistent reads (primary) and not yet to
# eventually consistent ones (standby); once the lag passes the bound the
# reads go to the primary and see it; after replay resumes the standby serves
# them again.  A read the standby cannot answer (a table it has not replayed
# yet) is answered by the primary.  Then the standby is killed (kill -9 of its
# postmaster and backends) with reads in flight on it: every read is answered,
# by the primary; restarted, it serves reads again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynGateway;
use DynStandby;
use DynCrash;
use IPC::Run;
use IO::Socket::INET;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time usleep);

my $primary = orders_primary('gw_primary');
# a table whose Scan takes a while: reads in flight when the standby is killed
$primary->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Big","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"k","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"k","AttributeType":"N"}]}')});
$primary->safe_psql('postgres', q{SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Big', 'Item',
  jsonb_build_object('k', jsonb_build_object('N', i::text), 'pad', jsonb_build_object('S', repeat('x', 400))))))
  FROM generate_series(1, 2000) i});
my $standby = hot_standby($primary, 'gw_standby');
$primary->wait_for_catchup($standby, 'replay');

my ($out, $err) = ('', '');
my ($gw, $port, $mport) = start_gateway(\$out, \$err, '--dev', '--metrics-port', '0', '--pool-size', '2',
	'--dbname', $primary->connstr('postgres'),
	'--standby', $standby->connstr('postgres') . ' application_name=gw-standby-pool',
	'--max-standby-lag', '2s');
END { local $?; $gw->kill_kill if $gw && $gw->pumpable }
my $deadline;
ok($port && $mport, 'the gateway started with a standby') or BAIL_OUT("gateway did not start: $out $err");
like($out, qr/standby \S+ for eventually consistent reads \(max lag 2 s\)/, 'it names the standby');

my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);

sub call
{
	my ($op, $body) = @_;
	my $r = $http->post("http://127.0.0.1:$port/", {
		headers => {
			'Content-Type' => 'application/x-amz-json-1.0',
			'X-Amz-Target' => "DynamoDB_20120810.$op",
		},
		content => encode_json($body),
	});
	my $json = eval { decode_json($r->{content}) } // {};
	return ($r->{status}, $json);
}

# One metric's value (the first sample whose line matches $re).
sub metric
{
	my ($re) = @_;
	my $r = $http->get("http://127.0.0.1:$mport/metrics");
	return undef unless $r->{success};
	return $r->{content} =~ m/^$re (\S+)$/m ? $1 : undef;
}

sub standby_up { return metric(qr/dynindex_gateway_standby_up\{standby="[^"]*"\}/) // -1; }
sub standby_reads { return metric(qr/dynindex_gateway_eventual_reads_total\{server="(?!primary)[^"]*"\}/) // 0; }
sub primary_reads { return metric(qr/dynindex_gateway_eventual_reads_total\{server="primary"\}/) // 0; }
sub rerouted { return metric(qr/dynindex_gateway_standby_fallbacks_total\{reason="standby_failed"\}/) // 0; }

sub wait_up
{
	my ($want, $what) = @_;
	my $t = time + 60;
	usleep(50_000) while standby_up() != $want && time < $t;
	is(standby_up(), $want, $what);
}

wait_up(1, 'the standby is used once its lag is known');
my $lag = metric(qr/dynindex_gateway_standby_replay_lag_seconds\{standby="[^"]*"\}/);
ok(defined $lag && $lag >= 0 && $lag < 2, "an idle, caught-up standby has a lag within the bound ($lag s)");

my $key = { pk => { S => 'late' }, sk => { N => '1' } };
my ($st, $j);

# ---- 1. both servers have the same data: reads on the standby ----
my $before = standby_reads();
($st, $j) = call('GetItem', { TableName => 'Orders', Key => { pk => { S => 'u1' }, sk => { N => '1' } } });
is($st, 200, 'GetItem');
is($j->{Item}{st}{S}, 'done', 'GetItem returns the item');
is(standby_reads(), $before + 1, 'an eventually consistent GetItem was answered by the standby');
$before = primary_reads();
($st, $j) = call('GetItem', { TableName => 'Orders', Key => { pk => { S => 'u1' }, sk => { N => '1' } }, ConsistentRead => JSON::PP::true });
is($j->{Item}{st}{S}, 'done', 'ConsistentRead GetItem returns the item');
is(primary_reads(), $before, 'a strongly consistent read is not counted as an eventually consistent one');

# ---- 2. replay paused: a write reaches the primary only ----
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$standby->poll_query_until('postgres', q{SELECT pg_get_wal_replay_pause_state() = 'paused'})
  or die 'replay did not pause';
# a moment for the gateway's probes to see the paused position
usleep(300_000);
is(standby_up(), 1, 'a paused standby with nothing to replay is still within the bound');

my $t0 = time;
($st, $j) = call('PutItem', { TableName => 'Orders', Item => { %$key, st => { S => 'open' }, v => { S => 'fresh' } } });
is($st, 200, 'PutItem through the gateway (on the primary)');
($st, $j) = call('UpdateItem', { TableName => 'Orders', Key => { pk => { S => 'u2' }, sk => { N => '2' } },
	UpdateExpression => 'SET v = :v', ExpressionAttributeValues => { ':v' => { S => 'changed' } } });
is($st, 200, 'UpdateItem through the gateway (on the primary)');
($st, $j) = call('CreateTable', { TableName => 'Fresh', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'k', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'k', KeyType => 'HASH' } ] });
is($st, 200, 'CreateTable through the gateway (on the primary)');
($st, $j) = call('PutItem', { TableName => 'Fresh', Item => { k => { S => 'a' }, v => { S => 'x' } } });
is($st, 200, 'PutItem into the new table');

my %eventual;
my %consistent;
$before = standby_reads();
($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key });
$eventual{GetItem} = [ $st, exists $j->{Item} ? 'seen' : 'not seen' ];
($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key, ConsistentRead => JSON::PP::false });
$eventual{'GetItem ConsistentRead false'} = [ $st, exists $j->{Item} ? 'seen' : 'not seen' ];
($st, $j) = call('GetItem', { TableName => 'Orders', Key => { pk => { S => 'u2' }, sk => { N => '2' } } });
$eventual{'GetItem of the updated item'} = [ $st, exists $j->{Item}{v} ? 'seen' : 'not seen' ];
($st, $j) = call('Query', { TableName => 'Orders', KeyConditionExpression => 'pk = :p',
	ExpressionAttributeValues => { ':p' => { S => 'late' } } });
$eventual{Query} = [ $st, $j->{Count} ? 'seen' : 'not seen' ];
($st, $j) = call('Scan', { TableName => 'Orders', Select => 'COUNT' });
$eventual{Scan} = [ $st, ($j->{Count} // 0) == 101 ? 'seen' : 'not seen' ];
($st, $j) = call('Scan', { TableName => 'Orders', Select => 'COUNT', Segment => 1, TotalSegments => 2 });
my $seg1 = $j->{Count};
($st, $j) = call('Scan', { TableName => 'Orders', Select => 'COUNT', Segment => 0, TotalSegments => 2 });
$eventual{'parallel Scan'} = [ $st, ($j->{Count} // 0) + ($seg1 // 0) == 101 ? 'seen' : 'not seen' ];
($st, $j) = call('BatchGetItem', { RequestItems => { Orders => { Keys => [ $key ] } } });
$eventual{BatchGetItem} = [ $st, scalar(@{ $j->{Responses}{Orders} // [] }) ? 'seen' : 'not seen' ];
($st, $j) = call('ExecuteStatement', { Statement => q{SELECT * FROM Orders WHERE pk = 'late' AND sk = 1} });
$eventual{'ExecuteStatement SELECT'} = [ $st, scalar(@{ $j->{Items} // [] }) ? 'seen' : 'not seen' ];
($st, $j) = call('BatchExecuteStatement', { Statements => [ { Statement => q{SELECT * FROM Orders WHERE pk = 'late' AND sk = 1} } ] });
$eventual{'BatchExecuteStatement SELECT'} = [ $st, exists $j->{Responses}[0]{Item} ? 'seen' : 'not seen' ];
my $served = standby_reads() - $before;
my $elapsed = time - $t0;

($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key, ConsistentRead => JSON::PP::true });
$consistent{GetItem} = [ $st, exists $j->{Item} ? 'seen' : 'not seen' ];
($st, $j) = call('Query', { TableName => 'Orders', KeyConditionExpression => 'pk = :p', ConsistentRead => JSON::PP::true,
	ExpressionAttributeValues => { ':p' => { S => 'late' } } });
$consistent{Query} = [ $st, $j->{Count} ? 'seen' : 'not seen' ];
($st, $j) = call('Scan', { TableName => 'Orders', Select => 'COUNT', ConsistentRead => JSON::PP::true });
$consistent{Scan} = [ $st, ($j->{Count} // 0) == 101 ? 'seen' : 'not seen' ];
($st, $j) = call('BatchGetItem', { RequestItems => { Orders => { Keys => [ $key ], ConsistentRead => JSON::PP::true } } });
$consistent{BatchGetItem} = [ $st, scalar(@{ $j->{Responses}{Orders} // [] }) ? 'seen' : 'not seen' ];
($st, $j) = call('TransactGetItems', { TransactItems => [ { Get => { TableName => 'Orders', Key => $key } } ] });
$consistent{TransactGetItems} = [ $st, exists $j->{Responses}[0]{Item} ? 'seen' : 'not seen' ];
($st, $j) = call('ExecuteStatement', { Statement => q{SELECT * FROM Orders WHERE pk = 'late' AND sk = 1}, ConsistentRead => JSON::PP::true });
$consistent{'ExecuteStatement SELECT'} = [ $st, scalar(@{ $j->{Items} // [] }) ? 'seen' : 'not seen' ];

SKIP:
{
	skip "the machine was too slow: the reads took $elapsed s, over the 2 s bound", 10 if $elapsed > 1.8;
	for my $op (sort keys %eventual)
	{
		is_deeply($eventual{$op}, [ 200, 'not seen' ], "replay paused: an eventually consistent $op (standby) does not see the write yet");
	}
	is($served, scalar(keys %eventual) + 1, 'the standby answered every eventually consistent read (10)');
}
for my $op (sort keys %consistent)
{
	is_deeply($consistent{$op}, [ 200, 'seen' ], "replay paused: a strongly consistent $op (primary) sees the write");
}

# a table the standby has not replayed: its error is not the answer, the primary's is
my $rr = rerouted();
($st, $j) = call('GetItem', { TableName => 'Fresh', Key => { k => { S => 'a' } } });
is($st, 200, 'GetItem of a table the standby does not have yet: answered');
is($j->{Item}{v}{S}, 'x', '... by the primary, with the item');
is(rerouted(), $rr + 1, '... after the standby failed it');
($st, $j) = call('GetItem', { TableName => 'Nowhere', Key => { k => { S => 'a' } } });
is($st, 400, 'GetItem of a table that does not exist');
is($j->{__type}, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', '... is ResourceNotFoundException, as from the primary');
is($j->{message}, 'Requested resource not found', '... with its message');

# ---- 3. the lag passes the bound: reads go to the primary ----
$deadline = time + 30;
usleep(100_000) while standby_up() != 0 && time < $deadline;
is(standby_up(), 0, 'replay paused for longer than --max-standby-lag: the standby is not used');
cmp_ok(metric(qr/dynindex_gateway_standby_replay_lag_seconds\{standby="[^"]*"\}/), '>', 2, 'its estimated lag is over the bound');
$before = primary_reads();
($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key });
is($j->{Item}{v}{S}, 'fresh', 'an eventually consistent GetItem now sees the write');
$primary->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders')});
($st, $j) = call('Query', { TableName => 'Orders', IndexName => 'bySt', KeyConditionExpression => 'st = :s',
	Select => 'COUNT', ExpressionAttributeValues => { ':s' => { S => 'open' } } });
is($j->{Count}, 34, 'a GSI Query sees it (33 + 1)');
is(primary_reads(), $before + 2, 'the primary answered them');
cmp_ok(metric(qr/dynindex_gateway_standby_fallbacks_total\{reason="no_standby"\}/), '>=', 2, 'counted as fallbacks');

# ---- 4. replay resumes: the standby serves reads again ----
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
wait_up(1, 'replay resumed: the standby is used again');
$before = standby_reads();
($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key });
is($j->{Item}{v}{S}, 'fresh', 'the standby has replayed the write');
($st, $j) = call('GetItem', { TableName => 'Fresh', Key => { k => { S => 'a' } } });
is($j->{Item}{v}{S}, 'x', 'and the new table');
is(standby_reads(), $before + 2, 'the standby answered');

# writes never reach the standby (it would refuse them: ServiceUnavailable)
for my $i (1 .. 5)
{
	($st, $j) = call('PutItem', { TableName => 'Orders', Item => { pk => { S => 'w' }, sk => { N => "$i" } } });
	is($st, 200, "PutItem $i with a standby in use");
}
($st, $j) = call('TransactWriteItems', { TransactItems => [
	{ Put => { TableName => 'Orders', Item => { pk => { S => 'w' }, sk => { N => '6' } } } },
	{ Update => { TableName => 'Orders', Key => $key, UpdateExpression => 'SET n = :n', ExpressionAttributeValues => { ':n' => { N => '1' } } } } ] });
is($st, 200, 'TransactWriteItems with a standby in use');
($st, $j) = call('ExecuteStatement', { Statement => q{UPDATE Orders SET n = 2 WHERE pk = 'late' AND sk = 1} });
is($st, 200, 'a PartiQL UPDATE with a standby in use');
($st, $j) = call('GetItem', { TableName => 'Orders', Key => $key, ConsistentRead => JSON::PP::true });
is($j->{Item}{n}{N}, '2', 'the writes applied on the primary');

# ---- 5. the standby is killed with reads in flight: none is lost ----
my $n_sock = 12;
my $rounds = 5;
# whole items, not COUNT: each read builds a page of items, long enough that the
# kill finds reads running on the standby even when this process is slow to
# send it (a loaded machine), so the reroute below is exercised
my $scan = encode_json({ TableName => 'Big' });
sub send_raw
{
	my ($s, $op, $b) = @_;
	print $s "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
	  . "X-Amz-Target: DynamoDB_20120810.$op\r\nContent-Length: " . length($b) . "\r\n\r\n$b";
	$s->flush;
}
sub read_raw
{
	my ($s) = @_;
	my $buf = '';
	$s->timeout(30);
	while ($buf !~ /\r\n\r\n/ || length($buf) < index($buf, "\r\n\r\n") + 4 + (($buf =~ /Content-Length: (\d+)/i)[0] // 0))
	{
		my $n = sysread($s, $buf, 65536, length($buf));
		last unless $n;
	}
	my ($status) = $buf =~ m{^HTTP/1\.1 (\d+)};
	my ($body) = $buf =~ m{\r\n\r\n(.*)$}s;
	return ($status // 0, eval { decode_json($body // '') } // {});
}
my @socks = map { IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp') or die "connect: $!" } 1 .. $n_sock;
my $items = $primary->safe_psql('postgres', q{SELECT dynindex.api('Scan', '{"TableName":"Big","Select":"COUNT","ConsistentRead":true}') ->> 'Count'});
cmp_ok($items, '>', 100, "a Scan page of Big holds $items items");
# the standby's postmaster and all its processes, found before the reads are sent
my $pm = (split /\n/, slurp_file($standby->data_dir . '/postmaster.pid'))[0];
my @procs = ($pm);
opendir(my $proc, '/proc') or die "no /proc: $!";
for my $p (grep { /^\d+$/ } readdir $proc)
{
	open(my $fh, '<', "/proc/$p/stat") or next;
	my $stat = <$fh>;
	close $fh;
	push @procs, $p if defined $stat && $stat =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
}
closedir $proc;
$rr = rerouted();
$before = standby_reads();
my ($ok, $bad) = (0, 0);
for my $round (1 .. $rounds)
{
	send_raw($_, 'Scan', $scan) for @socks;
	if ($round == 2)
	{
		# at once, while the standby runs the reads just sent
		kill 'KILL', @procs;
		ok(crash_node($standby), 'standby killed with SIGKILL (postmaster and backends) with reads in flight');
	}
	for my $s (@socks)
	{
		my ($status, $body) = read_raw($s);
		if ($status == 200 && ($body->{Count} // -1) == $items) { $ok++ }
		else { $bad++; diag("status $status: " . encode_json($body)); }
	}
}
is($bad, 0, 'no read failed while the standby was killed');
is($ok, $n_sock * $rounds, "every read was answered with all $items items");
cmp_ok(standby_reads(), '>=', $before + $n_sock, 'the standby answered the reads sent before it was killed');
cmp_ok(rerouted(), '>', $rr, 'the reads in flight on the killed standby were answered by the primary');
wait_up(0, 'the killed standby is not used');
($st, $j) = call('Scan', { TableName => 'Big', Select => 'COUNT' });
is($j->{Count}, 2000, 'reads go to the primary while the standby is down');

# ---- 6. restarted, it serves reads again ----
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
wait_up(1, 'the restarted standby is used again');
$before = standby_reads();
($st, $j) = call('Scan', { TableName => 'Big', Select => 'COUNT' });
is($j->{Count}, 2000, 'Scan on the restarted standby');
is(standby_reads(), $before + 1, 'answered by the standby');
# the gateway's stderr reaches $err when the harness pumps it
$deadline = time + 10;
while ($err !~ /standby \S+: not used/ && time < $deadline)
{
	$gw->pump_nb;
	usleep(50_000);
}
like($err, qr/standby \S+: not used/, 'the gateway logged when it stopped using the standby');
note("gateway log:\n$err");

$gw->kill_kill;
$standby->stop;
$primary->stop;
done_testing();
