# ImportTable from an S3-compatible store (test/s3/server.js: s3rver behind a
# SigV4-verifying proxy, DynS3.pm): a DynamoDB export's data files
# (data/*.json.gz, {"Item": ...} lines) and Ion text files import unchanged
# from a prefix listed over several pages; a bucket the store refuses fails
# the import cleanly (FAILED, S3AccessDenied, no table left).
use strict;
use warnings;
use lib 'test/t';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IO::Compress::Gzip qw(gzip $GzipError);
use DynS3;

plan skip_all => 'node/npm or s3rver not available' unless DynS3::install();

my $KEY = 'AKIDDYNINDEXIMPORT';
my $SECRET = 'iMpOrTsEcReT/' . int(rand(1e9));
my $s3 = DynS3::start(key => $KEY, secret => $SECRET, buckets => ['exports'], max_keys => 3);

my $node = PostgreSQL::Test::Cluster->new('import_s3');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
my $ep = $s3->{endpoint};
$node->safe_psql('postgres', qq{
  SET log_statement = 'none';
  SELECT dynindex.set_object_store('exports', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => '$SECRET');
  SELECT dynindex.set_object_store('wrongsecret', 's3', endpoint => '$ep', access_key_id => '$KEY',
      secret_access_key => 'not-the-secret', remote_bucket => 'exports');
});

# an export's layout: AWSDynamoDB/<id>/manifest-summary.json, manifest-files.json, data/<n>.json.gz
my $total = 0;
for my $f (1 .. 7)
{
	my $text = join('', map { my $i = $f * 1000 + $_; $total++;
		qq({"Item":{"pk":{"S":"u$i"},"n":{"N":"$i"},"tags":{"SS":["a","b$i"]},"m":{"M":{"x":{"L":[{"BOOL":true},{"NULL":true}]}}}}}\n) } 1 .. 150);
	my $gz;
	gzip(\$text => \$gz) or die $GzipError;
	my $hex = unpack('H*', $gz);
	$node->safe_psql('postgres', qq{SELECT dynindex.write_object('exports', 'AWSDynamoDB/0123-abc/data/$f.json.gz', '\\x$hex'::bytea)});
}
$node->safe_psql('postgres', q{SELECT dynindex.write_object('exports', 'AWSDynamoDB/0123-abc/manifest-summary.json', convert_to('{"itemCount": 5}', 'UTF8'))});
$node->safe_psql('postgres', q{SELECT dynindex.write_object('exports', 'ion/AWSDynamoDB/9/data/a.ion', convert_to(
  E'$ion_1_0 {Item:{pk:"i1",n:1.,b:{{aGk=}}}}\n$ion_1_0 {Item:{pk:"i2",ns:$dynamodb_NS::[1.,2.]}}\n', 'UTF8'))});

sub import_table
{
	my ($name, $bucket, $prefix, $format, $compression) = @_;
	my $arn = $node->safe_psql('postgres', qq{
		SELECT dynindex.api('ImportTable', jsonb_build_object(
		  'S3BucketSource', jsonb_build_object('S3Bucket', '$bucket', 'S3KeyPrefix', '$prefix'),
		  'InputFormat', '$format', 'InputCompressionType', '$compression',
		  'TableCreationParameters', jsonb_build_object('TableName', '$name', 'BillingMode', 'PAY_PER_REQUEST',
		    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb,
		    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb)))->'ImportTableDescription'->>'ImportArn'});
	$node->safe_psql('postgres', qq{SELECT dynindex.wait_for_import('$arn', '120 s')});
	return $node->safe_psql('postgres', qq{SELECT concat_ws(' ', status, processed_items, imported_items, error_count, failure_code, failure_message)
		FROM dynindex.imports WHERE import_arn = '$arn'});
}

is(import_table('FromS3', 'exports', 'AWSDynamoDB/0123-abc/data/', 'DYNAMODB_JSON', 'GZIP'),
	"COMPLETED $total $total 0", 'the data files of an export import from S3 (7 objects, listed 3 per page)');
cmp_ok(scalar(grep { /^GET \/exports\/\?continuation-token=\S+&list-type=2&prefix=AWSDynamoDB%2F0123-abc%2Fdata%2F 0 ok$/ } DynS3::requests($s3)), '>=', 2,
	'the listing was read over several pages');
is($node->safe_psql('postgres', q{SELECT dynindex.api('GetItem', '{"TableName": "FromS3", "Key": {"pk": {"S": "u3007"}}}')}),
	'{"Item": {"m": {"M": {"x": {"L": [{"BOOL": true}, {"NULL": true}]}}}, "n": {"N": "3007"}, "pk": {"S": "u3007"}, "tags": {"SS": ["a", "b3007"]}}}',
	'an item reads back as it was written');
is(import_table('IonS3', 'exports', 'ion/', 'ION', 'NONE'), 'COMPLETED 2 2 0', 'Ion text imports from S3');
like(import_table('Refused', 'wrongsecret', 'AWSDynamoDB/', 'DYNAMODB_JSON', 'GZIP'),
	qr/^FAILED 0 0 0 S3AccessDenied Access Denied/, 'a store that refuses the credentials fails the import');
like($node->safe_psql('postgres', q{SELECT dynindex.api('ListTables', '{}')}), qr/^\{"TableNames": \["FromS3", "IonS3"\]\}$/,
	'the failed import left no table');
my $log = slurp_file($node->logfile);
unlike($log, qr/\Q$SECRET\E/, 'the secret is in no log line');
# (the test's own statements are logged, with their literals: only the server's messages count)
is(scalar(grep { /u3007|b3007/ && !/statement:/ } split /\n(?=\d{4}-)/, $log), 0, 'no item content in the server\'s messages');

$node->stop;
DynS3::kill9($s3);    # the server (and its proxy) must not outlive the test
done_testing();
