# Crash safety of GSI maintenance: kill -9 the postmaster (and its backends)
# while sessions run PutItem/UpdateItem/DeleteItem on a table with two GSIs
# and the worker applies their changes; restart, wait for the queue to drain,
# and check that both GSIs equal what the items imply (verify_indexes).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use IPC::Run;
use Time::HiRes qw(usleep);

my $SESSIONS = 2;
my $OPS      = 30000;    # more than they run before the crash
my $KEYS     = 300;

my $node = PostgreSQL::Test::Cluster->new('gsi_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\nfsync = on\nlog_statement = none\n");
$node->append_conf('postgresql.conf', "dynindex.gsi_batch_size = 50\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Orders",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
    {"AttributeName":"status","AttributeType":"S"},{"AttributeName":"day","AttributeType":"N"},{"AttributeName":"cust","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "GlobalSecondaryIndexes":[
    {"IndexName":"byStatus","KeySchema":[{"AttributeName":"status","KeyType":"HASH"},{"AttributeName":"day","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}},
    {"IndexName":"byCust","KeySchema":[{"AttributeName":"cust","KeyType":"HASH"},{"AttributeName":"status","KeyType":"HASH"},{"AttributeName":"day","KeyType":"RANGE"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["n"]}}],
  "BillingMode":"PAY_PER_REQUEST"}')});

# One random write (autocommit) per line.
sub op_sql
{
	my ($s, $i) = @_;
	my $k  = int(rand($KEYS));
	my $key = sprintf('"pk":{"S":"k%d"},"sk":{"S":"s%d"}', $k % 30, $k);
	my $r  = rand();
	my @st = ('PENDING', 'SHIPPED', 'DONE');
	my $status = $st[ int(rand(3)) ];
	my $day    = int(rand(200)) - 100;
	if ($r < 0.45)
	{
		my $extra = rand() < 0.8 ? qq{,"status":{"S":"$status"}} : '';
		$extra .= ',"cust":{"S":"c' . ($k % 7) . '"}' if rand() < 0.7;
		return qq{SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{$key,"day":{"N":"$day"},"n":{"N":"$i"},"pad":{"S":"s$s"}$extra}}') IS NOT NULL;\n};
	}
	elsif ($r < 0.8)
	{
		my $upd = rand() < 0.3 ? 'REMOVE #s SET n = :n' : 'SET #s = :s, #d = :d, n = :n';
		my $vals = $upd =~ /:s/ ? qq{":s":{"S":"$status"},":d":{"N":"$day"},":n":{"N":"$i"}} : qq{":n":{"N":"$i"}};
		my $names = $upd =~ /#d/ ? '"#s":"status","#d":"day"' : '"#s":"status"';
		return qq{SELECT dynindex.api('UpdateItem', '{"TableName":"Orders","Key":{$key},"UpdateExpression":"$upd","ExpressionAttributeNames":{$names},"ExpressionAttributeValues":{$vals}}') IS NOT NULL;\n};
	}
	return qq{SELECT dynindex.api('DeleteItem', '{"TableName":"Orders","Key":{$key}}') IS NOT NULL;\n};
}

my (@h, @out, @err);
for my $s (1 .. $SESSIONS)
{
	my $file = $node->basedir . "/writer$s.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh op_sql($s, $_) for 1 .. $OPS;
	close $fh;
	my ($stdout, $stderr) = ('', '');
	push @out, \$stdout;
	push @err, \$stderr;
	push @h, IPC::Run::start([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
}

# Crash once the worker has applied a good number of changes while writes go on.
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (1)
{
	eval { $_->pump_nb; 1 } for @h;
	my $applied = $node->safe_psql('postgres', 'SELECT coalesce(sum(changes_applied), 0) FROM dynindex.gsi_applied');
	last if $applied >= 3000;
	BAIL_OUT("writers stopped early: " . ${ $err[0] } . ${ $err[1] }) if grep { !$_->pumpable } @h;
	BAIL_OUT('no progress') if time > $deadline;
	usleep(100_000);
}
my $queued = $node->safe_psql('postgres', 'SELECT count(*) FROM dynindex.gsi_changes');
note("queued changes at the crash: $queued");

ok(crash_node($node), 'postmaster and backends are gone');
for my $h (@h) { eval { $h->finish; 1 }; }

$node->start;
ok(1, 'restarted after kill -9');
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '120 seconds')}), 't',
	'the queue left by the crash is drained');
is($node->safe_psql('postgres', 'SELECT count(*) FROM dynindex.gsi_changes'), '0', 'queue empty');
is($node->safe_psql('postgres', q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ', ' ORDER BY index_name) FROM dynindex.verify_indexes('Orders')}),
	'byCust 0 0 0, byStatus 0 0 0', 'both GSIs verify clean after the crash');
my $items = $node->safe_psql('postgres', q{SELECT count(*) FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName":"Orders"}') -> 'Items')});
note("items after recovery: $items");
ok($items > 0, 'the table has items');

# writes after recovery are applied as well
$node->safe_psql('postgres', q{SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"after"},"sk":{"S":"x"},"status":{"S":"NEW"},"day":{"N":"1"}}}')});
is($node->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders', '30 seconds')}), 't', 'worker applies new writes');
is($node->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","KeyConditionExpression":"#s = :s","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":s":{"S":"NEW"}}}') ->> 'Count'}),
	'1', 'new write visible in the GSI');
$node->stop;
done_testing();
