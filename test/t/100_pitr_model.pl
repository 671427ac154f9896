# Point-in-time recovery against a model (issue #24 item 4): a restore to T
# returns exactly the items of the transactions whose commit stamp is <= T.
#
#  1. 8 concurrent writers (psql sessions, one transaction per step: PutItem,
#     UpdateItem, DeleteItem, or a TransactWriteItems of two keys, on a small
#     shared key space so that they collide) record each acknowledged step with
#     its commit stamp (dynindex.last_commit_stamp(), read after the COMMIT; a
#     delete of an absent item writes nothing and has none).
#     The model replays the acknowledged steps in stamp order; restores to
#     dozens of random T (exact stamps, a microsecond before one, between two)
#     must give the model's state at T, item for item.
#  2. The same across kill -9 of the postmaster in the middle of the load: after
#     recovery, restores to T below every writer's last acknowledged stamp
#     (so that every commit up to T was acknowledged) match the model.
#  3. A database created at 0.2 (PITR off, and refused with a hint before the
#     update) is updated with ALTER EXTENSION UPDATE, PITR enabled, written and
#     restored.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DynCrash;
use IPC::Run;
use JSON::PP;
use Time::HiRes qw(usleep);

my $WRITERS = 8;
my $STEPS   = 250;      # per writer in phase 1
my $KEYS    = 12;       # shared key space: k0..k5 x sk 1..2
my $RESTORES = 30;      # random restore times per phase

my $node = PostgreSQL::Test::Cluster->new('pitr_model');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
  if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->append_conf('postgresql.conf', "fsync = on\nlog_statement = none\nmax_connections = 40\n");
$node->start;

sub sql { my ($db, $q) = @_; return $node->safe_psql($db, $q); }

sub api
{
	my ($db, $op, $req) = @_;
	my $json = encode_json($req);
	$json =~ s/'/''/g;
	return decode_json(sql($db, "SELECT dynindex.api('$op', '$json')"));
}

sql('postgres', 'CREATE EXTENSION dynindex');
api('postgres', 'CreateTable', { TableName => 'Model', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'pk', AttributeType => 'S' }, { AttributeName => 'sk', AttributeType => 'N' } ],
	KeySchema => [ { AttributeName => 'pk', KeyType => 'HASH' }, { AttributeName => 'sk', KeyType => 'RANGE' } ] });
api('postgres', 'UpdateContinuousBackups', { TableName => 'Model',
	PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::true } });
my $enabled = sql('postgres', q{SELECT (extract(epoch FROM enabled_at) * 1000000)::int8 FROM dynindex.pitr WHERE table_name = 'Model'});

# ---- the writers' steps: deterministic per (writer, step, phase) ----
my %ops;    # "$phase $s $i" => [ [key, value or undef], ... ]

sub key_of { my ($k) = @_; return ('k' . int($k / 2), 1 + $k % 2); }

sub step_sql
{
	my ($phase, $s, $i) = @_;
	my $r = (($s * 7919 + $i * 104729 + $phase * 31) % 1000);
	my $k = ($s * 13 + $i * 7 + $phase) % $KEYS;
	my ($pk, $sk) = key_of($k);
	my $v = "p$phase-w$s-$i";
	my ($op, $req, @effects);
	if ($r < 400)
	{
		($op, $req) = ('PutItem', { TableName => 'Model', Item => { pk => { S => $pk }, sk => { N => "$sk" }, v => { S => $v } } });
		@effects = ([ "$pk/$sk", $v ]);
	}
	elsif ($r < 700)
	{
		($op, $req) = ('UpdateItem', { TableName => 'Model', Key => { pk => { S => $pk }, sk => { N => "$sk" } },
			UpdateExpression => 'SET v = :v', ExpressionAttributeValues => { ':v' => { S => $v } } });
		@effects = ([ "$pk/$sk", $v ]);
	}
	elsif ($r < 850)
	{
		($op, $req) = ('DeleteItem', { TableName => 'Model', Key => { pk => { S => $pk }, sk => { N => "$sk" } } });
		@effects = ([ "$pk/$sk", undef ]);
	}
	else
	{
		# two keys, in key order or the reverse: TransactWriteItems takes its
		# items' locks in key order whatever the request's order (api/transact.c),
		# so the writers never deadlock and no step is cancelled.
		# A Put and an Update: both always write.  (A Delete of an absent item
		# writes nothing and takes no lock, so a transaction's other write can
		# commit after a concurrent insert of that key it never saw: the table,
		# and the restore, keep that item, a model replaying the Delete would not.)
		my $k2 = ($k + 1 + $i % ($KEYS - 1)) % $KEYS;
		my ($lo, $hi) = sort { $a <=> $b } ($k, $k2);
		my ($pa, $sa) = key_of($lo);
		my ($pb, $sb) = key_of($hi);
		my @items = (
			{ Put => { TableName => 'Model', Item => { pk => { S => $pa }, sk => { N => "$sa" }, v => { S => $v } } } },
			{ Update => { TableName => 'Model', Key => { pk => { S => $pb }, sk => { N => "$sb" } },
				UpdateExpression => 'SET v = :v', ExpressionAttributeValues => { ':v' => { S => "$v-b" } } } });
		@items = reverse @items if $i % 2;
		($op, $req) = ('TransactWriteItems', { TransactItems => \@items });
		@effects = ([ "$pa/$sa", $v ], [ "$pb/$sb", "$v-b" ]);
	}
	$ops{"$phase $s $i"} = \@effects;
	my $json = encode_json($req);
	$json =~ s/'/''/g;
	return "SELECT dynindex.api('$op', '$json') IS NOT NULL AS ok \\gset\n"
	  . "SELECT 'ACK $s $i ' || coalesce(((extract(epoch FROM dynindex.last_commit_stamp()) * 1000000)::int8)::text, '');\n";
}

# Start the writers of a phase; returns handles and their outputs.
sub start_writers
{
	my ($phase, $steps) = @_;
	my (@h, @out, @err);
	for my $s (1 .. $WRITERS)
	{
		my $file = $node->basedir . "/writer-$phase-$s.sql";
		open(my $fh, '>', $file) or die "$file: $!";
		print $fh step_sql($phase, $s, $_) for 1 .. $steps;
		close $fh;
		my ($stdout, $stderr) = ('', '');
		push @out, \$stdout;
		push @err, \$stderr;
		push @h, IPC::Run::start(
			[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
			'<', \undef, '>', \$stdout, '2>', \$stderr);
	}
	return (\@h, \@out, \@err);
}

# The acknowledged steps of a phase: [stamp, phase, writer, step] each.
sub acks
{
	my ($phase, $out) = @_;
	my @a;
	for my $s (1 .. $WRITERS)
	{
		# a step that changed nothing (a delete of an absent item) has no stamp: nothing to replay
		while (${ $out->[ $s - 1 ] } =~ /^ACK \Q$s\E (\d+) ?(\d*)$/mg) { push @a, [ $2 eq '' ? undef : $2, $phase, $s, $1 ]; }
	}
	return @a;
}

# The model's state at T (microseconds since the epoch): "pk/sk=v,..." sorted.
my @events;    # every acknowledged step, sorted by stamp
sub model_at
{
	my ($t) = @_;
	my %state;
	for my $e (@events)
	{
		last if $e->[0] > $t;
		for my $eff (@{ $ops{"$e->[1] $e->[2] $e->[3]"} })
		{
			if (defined $eff->[1]) { $state{ $eff->[0] } = $eff->[1]; }
			else { delete $state{ $eff->[0] }; }
		}
	}
	return join(',', sort map { "$_=$state{$_}" } keys %state);
}

# Restore Model to T into a new table; its items as "pk/sk=v,..." sorted.
my $restored = 0;
sub restore_at
{
	my ($t) = @_;
	my $target = sprintf('R%04d', ++$restored);
	sql('postgres', "SELECT dynindex.restore_table_to_point_in_time('Model', '$target', "
		  . "'epoch'::timestamptz + ($t || ' microseconds')::interval) IS NOT NULL");
	my $storage = sql('postgres', "SELECT storage FROM dynindex.tables WHERE table_name = '$target'");
	my $items = sql('postgres', "SELECT coalesce(string_agg(s, ',' ORDER BY s), '') FROM "
		  . "(SELECT (item->'pk'->>'S') || '/' || (item->'sk'->>'N') || '=' || (item->'v'->>'S') AS s FROM $storage) x");
	api('postgres', 'DeleteTable', { TableName => $target });
	return $items;
}

# Restore times: exact stamps, a microsecond before one, between two, the edges.
sub pick_times
{
	my ($lo, $hi, @stamps) = @_;
	my @t = ($lo, $hi);
	my @in = grep { $_ >= $lo && $_ <= $hi } @stamps;
	while (@t < $RESTORES && @in)
	{
		my $x = $in[ int(rand(@in)) ];
		my $kind = int(rand(3));
		push @t, $kind == 0 ? $x : $kind == 1 ? $x - 1 : $x + int(rand(2000));
	}
	return grep { $_ >= $lo && $_ <= $hi } @t;
}

sub compare_restores
{
	my ($label, @times) = @_;
	my $bad = 0;
	for my $t (@times)
	{
		my ($got, $want) = (restore_at($t), model_at($t));
		next if $got eq $want;
		$bad++;
		diag("$label: restore to $t: got [$got], model [$want]") if $bad <= 5;
		if ($bad <= 2)
		{
			my %g = map { (split /=/)[0] => 1 } split /,/, $got;
			my %w = map { (split /=/)[0] => 1 } split /,/, $want;
			for my $k (grep { !$w{$_} } keys %g)
			{
				my ($p, $sk) = split m{/}, $k;
				diag("  history of $k: " . sql('postgres', "SELECT string_agg((extract(epoch FROM valid_to) * 1000000)::int8 || ':' || coalesce(item->'v'->>'S', '-'), ' ' ORDER BY valid_to) "
					  . "FROM dynindex.item_history('Model', '{\"pk\": {\"S\": \"$p\"}, \"sk\": {\"N\": \"$sk\"}}')"));
				diag("  model events of $k: " . join(' ', map { my $e = $_; map { "$e->[0]:" . ($_->[1] // '-') . "(w$e->[2]-$e->[3])" } grep { $_->[0] eq $k } @{ $ops{"$e->[1] $e->[2] $e->[3]"} } } @events));
			}
		}
	}
	is($bad, 0, "$label: " . scalar(@times) . ' restores to random times match the model');
}

srand(24);

# ---- 1. concurrent writers, then restores ----
my ($h, $out, $err) = start_writers(1, $STEPS);
for my $i (0 .. $#$h)
{
	eval { $h->[$i]->finish; 1 } or diag("writer $i: $@");
	diag('writer ' . ($i + 1) . ' stderr: ' . substr(${ $err->[$i] }, 0, 2000)) if ${ $err->[$i] } ne '';
}
my @acked1 = acks(1, $out);
is(scalar @acked1, $WRITERS * $STEPS, 'every step of every writer acknowledged');
@events = sort { $a->[0] <=> $b->[0] } grep { defined $_->[0] } @acked1;
my %distinct = map { $_->[0] => 1 } @events;
is(scalar keys %distinct, scalar @events, 'commit stamps are distinct');
my $phase1_end = $events[-1][0];
compare_restores('8 writers', pick_times($enabled, $phase1_end + 1000, map { $_->[0] } @events));
is(restore_at($enabled), '', 'restore to the moment PITR was enabled: empty');

# the latest restorable time: the table as it is
{
	my $latest = api('postgres', 'RestoreTableToPointInTime', { SourceTableName => 'Model', TargetTableName => 'Latest',
		UseLatestRestorableTime => JSON::PP::true });
	my $st = sql('postgres', q{SELECT storage FROM dynindex.tables WHERE table_name = 'Latest'});
	is(sql('postgres', "SELECT coalesce(string_agg(s, ',' ORDER BY s), '') FROM "
		  . "(SELECT (item->'pk'->>'S') || '/' || (item->'sk'->>'N') || '=' || (item->'v'->>'S') AS s FROM $st) x"),
		model_at($phase1_end), 'UseLatestRestorableTime: the model after every step');
}

# ---- 2. kill -9 in the middle of the load ----
($h, $out, $err) = start_writers(2, 20000);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (1)
{
	eval { $_->pump_nb; 1 } for @$h;
	my %n;
	$n{ $_->[2] }++ for grep { defined $_->[0] } acks(2, $out);
	my $min = 1e9;
	for my $s (1 .. $WRITERS) { my $c = $n{$s} // 0; $min = $c if $c < $min; }
	last if $min >= 60;
	if (time > $deadline || grep { !$_->pumpable } @$h)
	{
		diag('writer ' . ($_ + 1) . ' stderr: ' . substr(${ $err->[$_] }, 0, 2000)) for 0 .. $#$err;
		BAIL_OUT("writers did not get 60 steps each acknowledged (min $min)");
	}
	usleep(20_000);
}
ok(crash_node($node), 'postmaster and backends killed with SIGKILL');
for my $x (@$h) { eval { $x->finish; 1 }; }
my @acked2 = grep { defined $_->[0] } acks(2, $out);
my %last;
for my $e (@acked2) { $last{ $e->[2] } = $e->[0] if !defined $last{ $e->[2] } || $e->[0] > $last{ $e->[2] }; }
my $safe = (sort { $a <=> $b } values %last)[0];    # every commit <= this one was acknowledged
note(scalar(@acked2) . " steps acknowledged before the crash; restoring up to $safe");
$node->start;
@events = sort { $a->[0] <=> $b->[0] } (@events, @acked2);
compare_restores('after kill -9', pick_times($phase1_end, $safe, map { $_->[0] } @acked2));
compare_restores('after kill -9, before it', pick_times($enabled, $phase1_end, map { $_->[0] } @events));

# a write after recovery gets a stamp after every one before the crash
api('postgres', 'PutItem', { TableName => 'Model', Item => { pk => { S => 'after' }, sk => { N => '1' }, v => { S => 'x' } } });
my $hist = sql('postgres', q{SELECT history FROM dynindex.pitr WHERE table_name = 'Model'});
my $after = sql('postgres', "SELECT (extract(epoch FROM max(valid_to)) * 1000000)::int8 FROM $hist");
my $max_before = (sort { $b <=> $a } map { $_->[0] } @acked2)[0];
cmp_ok($after, '>', $max_before, 'stamps after recovery follow the stamps before the crash');

# ---- 3. a database at 0.2, updated, then PITR ----
sql('postgres', 'CREATE DATABASE up');
sql('up', q{CREATE EXTENSION dynindex VERSION '0.2'});
api('up', 'CreateTable', { TableName => 'Old', BillingMode => 'PAY_PER_REQUEST',
	AttributeDefinitions => [ { AttributeName => 'id', AttributeType => 'S' } ],
	KeySchema => [ { AttributeName => 'id', KeyType => 'HASH' } ] });
api('up', 'PutItem', { TableName => 'Old', Item => { id => { S => "i$_" }, v => { N => "$_" } } }) for 1 .. 5;
is(api('up', 'DescribeContinuousBackups', { TableName => 'Old' })->{ContinuousBackupsDescription}{PointInTimeRecoveryDescription}{PointInTimeRecoveryStatus},
	'DISABLED', 'at 0.2: PITR reported off');
my ($ret, $o, $e) = $node->psql('up', q{SELECT dynindex.api('UpdateContinuousBackups', '{"TableName": "Old", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}')});
like($e, qr/point-in-time recovery needs version 0\.3 of the extension.*\n.*ALTER EXTENSION dynindex UPDATE/s, 'at 0.2: enabling PITR asks for the update');
api('up', 'PutItem', { TableName => 'Old', Item => { id => { S => 'i1' }, v => { N => '100' } } });
sql('up', 'ALTER EXTENSION dynindex UPDATE');
api('up', 'UpdateContinuousBackups', { TableName => 'Old', PointInTimeRecoverySpecification => { PointInTimeRecoveryEnabled => JSON::PP::true } });
my $t0 = sql('up', q{SELECT (extract(epoch FROM enabled_at) * 1000000)::int8 FROM dynindex.pitr WHERE table_name = 'Old'});
api('up', 'PutItem', { TableName => 'Old', Item => { id => { S => 'i2' }, v => { N => '200' } } });
api('up', 'DeleteItem', { TableName => 'Old', Key => { id => { S => 'i3' } } });
sql('up', "SELECT dynindex.restore_table_to_point_in_time('Old', 'OldAtEnable', 'epoch'::timestamptz + ($t0 || ' microseconds')::interval)");
sub items_of
{
	my ($db, $table) = @_;
	my $st = sql($db, "SELECT storage FROM dynindex.tables WHERE table_name = '$table'");
	return sql($db, "SELECT string_agg(s, ',' ORDER BY s) FROM (SELECT (item->'id'->>'S') || '=' || (item->'v'->>'N') AS s FROM $st) x");
}
is(items_of('up', 'OldAtEnable'),
	'i1=100,i2=2,i3=3,i4=4,i5=5', 'upgraded from 0.2: restore to the enabling gives the items written at 0.2');
is(items_of('up', 'Old'),
	'i1=100,i2=200,i4=4,i5=5', 'upgraded from 0.2: the table itself has the later writes');

$node->stop;
done_testing();
