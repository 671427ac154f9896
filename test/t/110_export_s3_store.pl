# The S3 client of the object stores (src/exchange/s3.c) against a real
# S3-compatible server that verifies SigV4 signatures (test/s3/server.js:
# s3rver behind a verifying proxy): single PUT and multipart upload of an
# object over the part size, ranged reads back byte for byte, listings of
# many pages, and the store's errors: no such bucket, a wrong secret, a
# wrong access key, a server that is down, and one that loses the
# connection mid-upload (clean failures, no crash, no secret in any message
# or log line).
use strict;
use warnings;
use lib 'test/t';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DynS3;

plan skip_all => 'node/npm or s3rver not available' unless DynS3::install();

my $KEY = 'AKIDDYNINDEXTEST';
my $SECRET = 'tEsTsEcReT/with+chars=' . int(rand(1e9));
my $s3 = DynS3::start(key => $KEY, secret => $SECRET, buckets => ['exports'], max_keys => 7);

my $node = PostgreSQL::Test::Cluster->new('s3_store');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "log_min_messages = debug1\nlog_error_verbosity = verbose\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my $ep = $s3->{endpoint};
# (the statements that hold a secret are not logged: log_statement is the
# administrator's choice, and the TAP servers log every statement)
$node->safe_psql('postgres', qq{
  SET log_statement = 'none';
  SELECT dynindex.set_object_store('exports', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => '$SECRET');
  SELECT dynindex.set_object_store('wrongsecret', 's3', endpoint => '$ep', access_key_id => '$KEY',
      secret_access_key => 'not-the-secret', remote_bucket => 'exports');
  SELECT dynindex.set_object_store('wrongkey', 's3', endpoint => '$ep', access_key_id => 'AKIDUNKNOWN',
      secret_access_key => '$SECRET', remote_bucket => 'exports');
  SELECT dynindex.set_object_store('nobucket', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => '$SECRET');
  SELECT dynindex.set_object_store('down', 's3', endpoint => 'http://127.0.0.1:1', access_key_id => '$KEY',
      secret_access_key => '$SECRET', remote_bucket => 'exports');
});

# ---- a small object: one PUT, read back
is($node->safe_psql('postgres', q{SELECT dynindex.write_object('exports', 'dir/a b+c&d.txt', 'hello')}),
	'5d41402abc4b2a76b9719d911017c592', 'single PUT: the ETag is the MD5');
is($node->safe_psql('postgres', q{SELECT convert_from(dynindex.read_object('exports', 'dir/a b+c&d.txt'), 'UTF8')}),
	'hello', 'a key with spaces and reserved characters reads back');
ok((grep { /^PUT \/exports\/dir\/a%20b%2Bc%26d\.txt .* ok$/ } DynS3::requests($s3)), 'the key was URI-encoded and the signature verified');

# ---- 13 MB over 5 MB parts: a multipart upload of 3 parts, read back in ranges
my $big = q{(SELECT string_agg(md5(i::text) || md5((i * 7)::text), '') FROM generate_series(1, 200000) i)::bytea};
$node->safe_psql('postgres', qq{SET dynindex.s3_part_size = '5MB'; SELECT dynindex.write_object('exports', 'big/object.bin', $big)});
my @req = DynS3::requests($s3);
is(scalar(grep { /^POST \/exports\/big\/object\.bin\?uploads= 0 ok$/ } @req), 1, 'multipart upload started');
is(scalar(grep { /^PUT \/exports\/big\/object\.bin\?partNumber=\d&uploadId=\S+ \d+ ok$/ } @req), 3, 'three parts uploaded');
ok((grep { /^PUT \/exports\/big\/object\.bin\?partNumber=1&uploadId=\S+ 5242880 ok$/ } @req), 'a full part is 5 MB');
is(scalar(grep { /^POST \/exports\/big\/object\.bin\?uploadId=\S+ \d+ ok$/ } @req), 1, 'multipart upload completed');
is($node->safe_psql('postgres', qq{SET dynindex.s3_part_size = '5MB';
	SELECT length(dynindex.read_object('exports', 'big/object.bin')) || ' ' || (md5(dynindex.read_object('exports', 'big/object.bin')) = md5($big))}),
	'12800000 true', 'the object reads back byte for byte (ranged GETs)');
ok((grep { /^GET \/exports\/big\/object\.bin 0 ok$/ } DynS3::requests($s3)), 'reads are GETs of the object');

# ---- listing: 50 objects in pages of 7 (the server's cap), all of them, in key order
$node->safe_psql('postgres', q{SELECT dynindex.write_object('exports', 'many/' || lpad(i::text, 3, '0'), i::text::bytea) FROM generate_series(1, 50) i});
is($node->safe_psql('postgres', q{SELECT count(*) || ' ' || min(key) || ' ' || max(key) || ' ' || sum(size) FROM dynindex.list_objects('exports', 'many/')}),
	'50 many/001 many/050 91', 'a listing of 8 pages gives all 50 objects');
is($node->safe_psql('postgres', q{SELECT string_agg(key, ',' ORDER BY ord) = string_agg(key, ',' ORDER BY key COLLATE "C")
	FROM dynindex.list_objects('exports', 'many/') WITH ORDINALITY AS l(key, size, ord)}), 't', 'in key order');
cmp_ok(scalar(grep { /^GET \/exports\/\?continuation-token=\S+&list-type=2&prefix=many%2F 0 ok$/ } DynS3::requests($s3)), '>=', 7,
	'continuation tokens were sent (signed, canonical query)');
# every reserved character in a query value, '+' first: libcurl 8.14 signed a '+'
# (a '%2B' in the URL, as in most continuation tokens) as a space, and S3 refused it
$node->safe_psql('postgres', q{SELECT dynindex.write_object('exports', 'odd+prefix/a b&c=d;e/' || i, 'x') FROM generate_series(1, 9) i});
is($node->safe_psql('postgres', q{SELECT count(*) || ' ' || min(key) FROM dynindex.list_objects('exports', 'odd+prefix/a b&c=d;e/')}),
	'9 odd+prefix/a b&c=d;e/1', "a prefix with '+', ' ', '&', '=', ';' lists over pages");
cmp_ok(scalar(grep { /^GET \/exports\/\?continuation-token=\S+&list-type=2&prefix=odd%2Bprefix%2Fa%20b%26c%3Dd%3Be%2F 0 ok$/ } DynS3::requests($s3)),
	'>=', 1, 'the prefix is sent percent-encoded, with its continuation tokens, and verified');
is(scalar(grep { / (?!ok$)\S+$/ && /list-type=2/ } DynS3::requests($s3)), 0, 'no listing request was refused');

# ---- the store's errors, each a clean ERROR with its FailureCode
sub err
{
	my ($sql) = @_;
	my ($ret, $out, $errout) = $node->psql('postgres', $sql);
	$errout =~ s/^.*?ERROR:\s+(\S+: [^\n]*).*$/$1/s;
	return $errout;
}
like(err(q{SELECT dynindex.write_object('nobucket', 'k', 'x')}), qr/^S3NoSuchBucket: The specified bucket does not exist$/, 'no such bucket');
like(err(q{SELECT * FROM dynindex.list_objects('nobucket', '')}), qr/^S3NoSuchBucket: /, 'no such bucket (listing)');
like(err(q{SELECT dynindex.write_object('wrongsecret', 'k', 'x')}), qr/^S3AccessDenied: Access Denied \(SignatureDoesNotMatch\)$/, 'a wrong secret');
like(err(q{SELECT dynindex.write_object('wrongkey', 'k', 'x')}), qr/^S3AccessDenied: Access Denied \(InvalidAccessKeyId\)$/, 'a wrong access key');
like(err(q{SELECT dynindex.read_object('exports', 'no/such/key')}), qr/^S3NoSuchKey: /, 'no such key');
like(err(q{SELECT dynindex.write_object('down', 'k', 'x')}), qr/^S3ServiceUnavailable: Could not reach the object store: /, 'a server that is down');
like(err(q{SELECT dynindex.write_object('notconfigured', 'k', 'x')}), qr/^S3NoSuchBucket: /, 'a bucket no store is configured for');

# ---- the connection lost mid-upload: single PUT and multipart part
ok(DynS3::fault($s3, 'drop-uploads'), 'the store now drops uploads');
like(err(q{SELECT dynindex.write_object('exports', 'lost/small', 'x')}), qr/^S3ServiceUnavailable: Could not reach the object store: /, 'a PUT whose connection is lost');
like(err(qq{SET dynindex.s3_part_size = '5MB'; SELECT dynindex.write_object('exports', 'lost/big', $big)}),
	qr/^S3ServiceUnavailable: /, 'a multipart upload whose part connection is lost');
ok(DynS3::fault($s3, 'none'), 'the store takes uploads again');
is($node->safe_psql('postgres', q{SELECT count(*) FROM dynindex.list_objects('exports', 'lost/')}), '0', 'no object appeared for the lost uploads');
is($node->safe_psql('postgres', q{SELECT 1}), '1', 'the server is up (no crash)');

# ---- the store killed: a clean failure
DynS3::kill9($s3);
like(err(q{SELECT dynindex.write_object('exports', 'after/kill', 'x')}), qr/^S3ServiceUnavailable: /, 'the store killed');

# ---- no secret anywhere: not in messages, not in the server log
my $log = slurp_file($node->logfile);
unlike($log, qr/\Q$SECRET\E/, 'the secret is not in the server log');
unlike($log, qr/not-the-secret/, 'nor the wrong one');
like($log, qr/S3AccessDenied/, 'while the failures are');
is($node->safe_psql('postgres', q{SELECT count(*) FROM dynindex.list_object_stores() s WHERE s::text LIKE '%' || 'tEsTsEcReT' || '%'}),
	'0', 'list_object_stores shows no secret');

$node->stop;
done_testing();
