# DynCitus — shared by the Citus TAP tests (test/t/09*_citus_*.pl): a coordinator
# and workers on loopback ports, each with citus and dynindex preloaded and
# dynindex.distributed on, the workers added to the coordinator, dynindex
# created there.
package DynCitus;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(citus_cluster citus_skip_reason);

# Why the Citus tests cannot run here, or undef: the vendored Citus 13.2
# supports PostgreSQL 15, 16 and 17 (docs/scaling.md#tests), and must be installed.
sub citus_skip_reason
{
	my ($major) = `pg_config --version` =~ /^PostgreSQL (\d+)/;
	return "Citus 13.2 supports PostgreSQL 15, 16 and 17, not $major"
	  unless grep { $_ == $major } 15, 16, 17;
	my $pkglibdir = `pg_config --pkglibdir`;
	chomp $pkglibdir;
	return "Citus is not installed in $pkglibdir (bash ../shared/vendor/citus/build.sh installs it; .ci/run does)"
	  unless -f "$pkglibdir/citus.so";
	return undef;
}

# citus_cluster(\@worker_names, @settings): the started nodes, coordinator
# first; @settings are postgresql.conf lines added to every node.
sub citus_cluster
{
	my ($workers, @settings) = @_;
	my @nodes;

	for my $name ('coordinator', @$workers)
	{
		my $n = PostgreSQL::Test::Cluster->new($name);
		$n->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
		$n->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
		  if -f 'test/dynindex.conf';
		$n->append_conf('postgresql.conf', join("\n",
			"shared_preload_libraries = 'citus,dynindex'",
			"listen_addresses = '127.0.0.1'",
			"dynindex.distributed = on", @settings, ""));
		$n->start;
		$n->safe_psql('postgres', 'CREATE EXTENSION citus');
		push @nodes, $n;
	}
	my $coord = $nodes[0];
	$coord->safe_psql('postgres', "SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ")");
	$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $_->port . ")")
	  for @nodes[ 1 .. $#nodes ];
	$coord->safe_psql('postgres', 'CREATE EXTENSION dynindex');
	return @nodes;
}

1;
