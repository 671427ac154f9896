# DynStandby — shared by the standby TAP tests (090_standby, 093_gateway_standby):
# a streaming primary with dynindex and its Orders table (a GSI on st, 100 items
# in 10 partitions, applied), and a hot standby made from a backup of it.
package DynStandby;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(orders_primary hot_standby);

# orders_primary($name): the started primary, its Orders table loaded and indexed.
sub orders_primary
{
	my ($name) = @_;
	my $primary = PostgreSQL::Test::Cluster->new($name);

	$primary->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
	$primary->append_conf('postgresql.conf', slurp_file('test/dynindex.conf'))
	  if -f 'test/dynindex.conf';
	$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
	$primary->start;
	$primary->safe_psql('postgres', 'CREATE EXTENSION dynindex');
	$primary->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Orders","BillingMode":"PAY_PER_REQUEST",
	  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
	  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"st","AttributeType":"S"}],
	  "GlobalSecondaryIndexes":[{"IndexName":"bySt","KeySchema":[{"AttributeName":"st","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}')});
	$primary->safe_psql('postgres', q{SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Orders', 'Item',
	  jsonb_build_object('pk', jsonb_build_object('S', 'u' || (i % 10)), 'sk', jsonb_build_object('N', i::text),
	                     'st', jsonb_build_object('S', CASE WHEN i % 3 = 0 THEN 'open' ELSE 'done' END)))))
	  FROM generate_series(1, 100) i});
	die 'the GSI of Orders was not applied'
	  unless $primary->safe_psql('postgres', q{SELECT dynindex.wait_for_indexes('Orders')}) eq 't';
	return $primary;
}

# hot_standby($primary, $name): a started streaming standby of $primary, from a new backup.
sub hot_standby
{
	my ($primary, $name) = @_;
	my $standby = PostgreSQL::Test::Cluster->new($name);

	$primary->backup('b');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	return $standby;
}

1;
