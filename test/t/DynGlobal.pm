# DynGlobal — shared by the global tables TAP tests (130_global_basic,
# 131_global_faults): servers of two regions, each with dynindex, logical
# decoding on and the same table Glob (a GSI byG, a stream), declared to
# each other, the table replicated both ways.
package DynGlobal;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(region_node global_pair api items converged bare_region_node declare_both table_items tables_converged replica_state);

# A started server of region $region with dynindex preloaded, logical decoding on and table Glob.
sub region_node
{
	my ($name, $region) = @_;
	my $n = bare_region_node($name, $region);

	$n->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Glob","BillingMode":"PAY_PER_REQUEST",
	  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
	  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"}],
	  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}],
	  "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}')});
	return $n;
}

# A started server of region $region with dynindex preloaded and logical decoding on, no table.
sub bare_region_node
{
	my ($name, $region) = @_;
	my $n = PostgreSQL::Test::Cluster->new($name);

	$n->init(allows_streaming => 'logical', extra => [ '--encoding=UTF8', '--locale=C' ]);
	$n->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
	$n->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n"
		  . "dynindex.region = '$region'\nmax_worker_processes = 16\nmax_replication_slots = 10\n"
		  . "dynindex.worker_naptime = 100\n");
	$n->start;
	# minors of 2026-08 on (15.19, 17.11, 18.6) load only the output plugins this names
	if ($n->safe_psql('postgres', q{SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'}) eq '1')
	{
		$n->append_conf('postgresql.conf', "output_plugin_libraries = 'pgoutput, test_decoding, dynindex'\n");
		$n->reload;
	}
	$n->safe_psql('postgres', 'CREATE EXTENSION dynindex');
	return $n;
}

# $n declares region $region, served by $other (a superuser: no password on the local socket).
sub declare
{
	my ($n, $region, $other) = @_;
	(my $conninfo = $other->connstr('postgres')) =~ s/'/''/g;
	$n->safe_psql('postgres', "SELECT dynindex.set_region('$region', '$conninfo')");
}

# (us-east-1, eu-west-1): Glob replicated both ways, both apply workers streaming.
sub global_pair
{
	my ($prefix) = @_;
	my $east = region_node("${prefix}east", 'us-east-1');
	my $west = region_node("${prefix}west", 'eu-west-1');

	declare($east, 'eu-west-1', $west);
	declare($west, 'us-east-1', $east);
	$east->safe_psql('postgres', q{SELECT dynindex._replicate_table('Glob', 'eu-west-1')});
	$west->safe_psql('postgres', q{SELECT dynindex._replicate_table('Glob', 'us-east-1')});
	for my $n ($east, $west)
	{
		ok($n->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pg_replication_slots WHERE slot_name LIKE 'dynindex_%' AND active}),
			$n->name . ': the other region streams its slot');
	}
	return ($east, $west);
}

# dynindex.api on $n; returns the response text.
sub api
{
	my ($n, $op, $json) = @_;
	$json =~ s/'/''/g;
	return $n->safe_psql('postgres', "SELECT dynindex.api('$op', '$json')");
}

# Every item of Glob, in key order, as one string.
sub items
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{SELECT coalesce(string_agg(i::text, E'\n' ORDER BY i->'pk'->>'S', (i->'sk'->>'N')::numeric), '')
	  FROM dynindex.read_all('Scan', '{"TableName":"Glob","ConsistentRead":true}') i});
}

# Wait until both sides hold the same items; true if they did within $secs (60) seconds.
sub converged
{
	my ($east, $west, $secs) = @_;
	for (1 .. 10 * ($secs // 60))
	{
		return 1 if items($east) eq items($west);
		usleep(100_000);
	}
	diag('us-east-1 and eu-west-1 differ');
	return 0;
}

# Every server of @nodes ([node, region] pairs) declares every other one.
sub declare_both
{
	my (@nodes) = @_;
	for my $a (@nodes)
	{
		for my $b (@nodes)
		{
			declare($a->[0], $b->[1], $b->[0]) if $a != $b;
		}
	}
}

# Every item of $table on $n (keys pk S and sk N), in key order, as one string.
sub table_items
{
	my ($n, $table) = @_;
	return $n->safe_psql('postgres', qq{SELECT coalesce(string_agg(i::text, E'\\n' ORDER BY i->'pk'->>'S', (i->'sk'->>'N')::numeric), '')
	  FROM dynindex.read_all('Scan', '{"TableName":"$table","ConsistentRead":true}') i});
}

# Wait until every node of @$nodes holds the same items of $table; true if they did within $secs seconds.
sub tables_converged
{
	my ($nodes, $table, $secs) = @_;
	for (1 .. 10 * ($secs // 60))
	{
		my $first = table_items($nodes->[0], $table);
		return 1 if !grep { table_items($_, $table) ne $first } @$nodes[1 .. $#$nodes];
		usleep(100_000);
	}
	diag("the regions differ on $table");
	return 0;
}

# "TableStatus Region:ReplicaStatus ..." of $table as DescribeTable shows it on $n.
sub replica_state
{
	my ($n, $table) = @_;
	return $n->safe_psql('postgres', qq{SELECT d->>'TableStatus' || coalesce(' ' || (SELECT string_agg((r->>'RegionName') || ':' || (r->>'ReplicaStatus'), ' ' ORDER BY r->>'RegionName')
	  FROM jsonb_array_elements(d->'Replicas') r), '')
	  FROM (SELECT dynindex.api('DescribeTable', '{"TableName":"$table"}')->'Table' AS d) s});
}

1;
