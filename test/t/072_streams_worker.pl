# The per-database worker's stream maintenance (src/streams/maintain.c): with
# a short shard lifetime and retention it rotates the open shards (children
# start right after their closed parents) while writes go on, then trims old
# records (trim points set, TrimmedDataAccessException for an iterator behind
# them) and removes the empty closed shards and the disabled stream; the
# worker logs no error, and every record written was readable in order
# through the lineage before the trim.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('streams_worker');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
# rotation every round (1 s); retention long until the test lowers it
$node->append_conf('postgresql.conf',
	"dynindex.stream_maintenance_interval = 1\ndynindex.stream_shard_lifetime = 1\ndynindex.stream_retention = 3600\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
$node->safe_psql('postgres', q{SELECT dynindex.api('CreateTable', '{"TableName":"Feed","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"}}')});
my $log_start = -s $node->logfile;

# writes spread over several worker rounds: key k<i % 10>, value i
for my $i (1 .. 60)
{
	$node->safe_psql('postgres',
		qq{SELECT dynindex.api('PutItem', '{"TableName":"Feed","Item":{"pk":{"S":"k@{[ $i % 10 ]}"},"v":{"N":"$i"}}}')});
	usleep(50_000);
}
# wait for a rotation after the last write
my $rotated = 0;
for (1 .. 100)
{
	$rotated = $node->safe_psql('postgres',
		q{SELECT count(*) FROM dynindex.stream_shards WHERE end_seq >= (SELECT max(seq) FROM dynindex.stream_records)});
	last if $rotated > 0;
	usleep(100_000);
}
ok($rotated > 0, 'the worker closed shards after the last record');

my $lineage = $node->safe_psql('postgres', q{
  SELECT count(*) FILTER (WHERE c.parent_shard_id IS NOT NULL),
         bool_and(c.start_seq = p.end_seq + 1) FILTER (WHERE c.parent_shard_id IS NOT NULL)
  FROM dynindex.stream_shards c LEFT JOIN dynindex.stream_shards p
    ON p.stream_id = c.stream_id AND p.shard_id = c.parent_shard_id});
like($lineage, qr/^[1-9]\d*\|t$/, "children start right after their parents ($lineage)");

# Read the whole lineage through the API: every record once, per key in order.
my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
DO $$
DECLARE arn text := dynindex.api('DescribeTable', '{"TableName": "Feed"}') #>> '{Table,LatestStreamArn}';
  d jsonb; sh jsonb; it text; r jsonb; e jsonb; start text; n int := 0; bad int := 0; last jsonb := '{}';
BEGIN
  LOOP
    d := dynindex.api('DescribeStream', jsonb_strip_nulls(jsonb_build_object('StreamArn', arn, 'ExclusiveStartShardId', start)));
    FOR sh IN SELECT x FROM jsonb_array_elements(d #> '{StreamDescription,Shards}') x ORDER BY (x #>> '{SequenceNumberRange,StartingSequenceNumber}') LOOP
      it := dynindex.api('GetShardIterator', jsonb_build_object('StreamArn', arn, 'ShardId', sh ->> 'ShardId',
        'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator';
      LOOP
        r := dynindex.api('GetRecords', jsonb_build_object('ShardIterator', it, 'Limit', 7));
        FOR e IN SELECT y FROM jsonb_array_elements(r -> 'Records') y LOOP
          n := n + 1;
          IF (last ->> (e #>> '{dynamodb,Keys,pk,S}'))::int >= (e #>> '{dynamodb,NewImage,v,N}')::int THEN bad := bad + 1; END IF;
          last := last || jsonb_build_object(e #>> '{dynamodb,Keys,pk,S}', (e #>> '{dynamodb,NewImage,v,N}')::int);
        END LOOP;
        EXIT WHEN NOT r ? 'NextShardIterator' OR jsonb_array_length(r -> 'Records') = 0;
        it := r ->> 'NextShardIterator';
      END LOOP;
    END LOOP;
    start := d #>> '{StreamDescription,LastEvaluatedShardId}';
    EXIT WHEN start IS NULL;
  END LOOP;
  RAISE NOTICE 'read % out of order %', n, bad;
END $$});
like($stderr, qr/read 60 out of order 0/, 'the lineage holds every record once, per key in order');

# an iterator taken now, used after the trim
my $it = $node->safe_psql('postgres', q{
  SELECT dynindex.api('GetShardIterator', jsonb_build_object('StreamArn', s.arn, 'ShardId', h.shard_id,
    'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator'
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "Feed"}') #>> '{Table,LatestStreamArn}' AS arn) s,
       dynindex.stream_shards h JOIN dynindex.stream_records r USING (stream_id, bucket)
  WHERE r.seq BETWEEN h.start_seq AND coalesce(h.end_seq, r.seq) ORDER BY r.seq LIMIT 1});

# disable the stream, then retention 0 and removal: the worker trims everything and removes it all
$node->safe_psql('postgres', q{SELECT dynindex.api('UpdateTable', '{"TableName":"Feed","StreamSpecification":{"StreamEnabled":false}}')});
$node->safe_psql('postgres', 'ALTER SYSTEM SET dynindex.stream_retention = 0');
$node->reload;
my $left = -1;
for (1 .. 100)
{
	$left = $node->safe_psql('postgres',
		q{SELECT (SELECT count(*) FROM dynindex.stream_records) + (SELECT count(*) FROM dynindex.stream_shards)
		  + (SELECT count(*) FROM dynindex.streams)});
	last if $left == 0;
	usleep(100_000);
}
is($left, 0, 'records trimmed, closed shards and the disabled stream removed');
my $log = slurp_file($node->logfile, $log_start);
unlike($log, qr/ERROR/, 'the worker logged no error');
($ret, $stdout, $stderr) = $node->psql('postgres',
	qq{SELECT dynindex.api('GetRecords', jsonb_build_object('ShardIterator', '$it'))});
like($stderr, qr/ResourceNotFoundException: Requested resource not found: Stream: .* not found/,
	'an iterator of a removed stream: ResourceNotFoundException');

$node->stop;
done_testing();
