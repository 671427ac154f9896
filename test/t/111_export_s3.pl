# Exports to a real S3-compatible server (test/s3/server.js: s3rver behind a
# SigV4-verifying proxy), asked for through the in-server endpoint with
# boto3 (export_table_to_point_in_time, describe_export, list_exports):
# the files read back from the store's disk, independently of dynindex's
# S3 client — every data file gunzips, its lines are {"Item": ...} and
# count to itemCount, md5Checksum and the checksum files are right, the
# total is ItemCount —; a data file over the part size goes up in a
# multipart upload; the store's errors fail the export with a clean
# FailureCode; the job's process runs under SCHED_IDLE (or at
# dynindex.export_nice with dynindex.export_sched_idle off), and pauses while
# another session writes (dynindex.export_yield), not while one writes WAL without
# transactions; its process terminated mid-export exits
# cleanly and the job runs again; kill -9 of the postmaster mid-export: after the restart the
# job runs again and completes, its data/ holding exactly the manifest's
# files.
use strict;
use warnings;
use lib 'test/t';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use Digest::MD5 qw(md5 md5_hex md5_base64);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Time::HiRes qw(usleep);
use IPC::Run;
use DynS3;
use DynCrash;
use File::Temp qw(tempfile);

plan skip_all => 'node/npm or s3rver not available' unless DynS3::install();
plan skip_all => 'python3 with boto3 not available' unless system("python3 -c 'import boto3' 2>/dev/null") == 0;

my $KEY = 'AKIDEXPORTTEST';
my $SECRET = 'export-secret-' . int(rand(1e9));
my $s3 = DynS3::start(key => $KEY, secret => $SECRET, buckets => ['dynexports']);
my $s3dir = "$s3->{dir}/data/dynexports";

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $node = PostgreSQL::Test::Cluster->new('export_s3');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'dynindex,dynindex_http'
dynindex_http.port = $port
dynindex_http.dev = on
dynindex_http.workers = 1
dynindex.s3_part_size = '5MB'
restart_after_crash = on
log_statement = none
EOC
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');
my $ep = $s3->{endpoint};
$node->safe_psql('postgres', qq{
  SELECT dynindex.set_object_store('dynexports', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => '$SECRET');
  SELECT dynindex.set_object_store('denied', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => 'wrong', remote_bucket => 'dynexports');
  SELECT dynindex.set_object_store('missing', 's3', endpoint => '$ep', access_key_id => '$KEY', secret_access_key => '$SECRET');
});

# 2500 items of ~5 KB of hex: a data file of ~7 MB gzip'd, over the 5 MB part size
$node->safe_psql('postgres', q{
  SELECT dynindex.api('CreateTable', '{"TableName":"Big","BillingMode":"PAY_PER_REQUEST",
    "AttributeDefinitions":[{"AttributeName":"id","AttributeType":"N"}],"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}');
  SELECT dynindex.api('UpdateContinuousBackups', '{"TableName":"Big","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}');
  SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Big', 'Item', jsonb_build_object(
    'id', jsonb_build_object('N', i::text), 'blob', jsonb_build_object('S', b.blob)))))
  FROM generate_series(1, 2500) i,
       LATERAL (SELECT string_agg(md5(random()::text || i || g), '') AS blob FROM generate_series(1, 160) g) b;
});

# boto3 against the endpoint
sub boto3
{
	my ($code) = @_;
	my $script = <<"EOP";
import boto3, json, sys, time
c = boto3.client('dynamodb', endpoint_url='http://127.0.0.1:$port', region_name='us-east-1',
                 aws_access_key_id='x', aws_secret_access_key='y')
def wait(arn):
    for _ in range(1200):
        d = c.describe_export(ExportArn=arn)['ExportDescription']
        if d['ExportStatus'] != 'IN_PROGRESS':
            return d
        time.sleep(0.1)
    return d
$code
EOP
	my ($fh, $file) = tempfile(SUFFIX => '.py', UNLINK => 1);
	print $fh $script;
	close $fh;
	my $out = `python3 $file 2>&1`;
	return ($? == 0, $out);
}
$ENV{PYTHONIOENCODING} = 'utf-8';

my ($ok, $out) = boto3(<<'EOP');
r = c.export_table_to_point_in_time(TableArn="arn:aws:dynamodb:us-east-1:000000000000:table/Big",
                                    S3Bucket="dynexports", S3Prefix="run1", ExportFormat="DYNAMODB_JSON")
d = r["ExportDescription"]
assert d["ExportStatus"] == "IN_PROGRESS", d
d = wait(d["ExportArn"])
l = c.list_exports(TableArn="arn:aws:dynamodb:us-east-1:000000000000:table/Big")["ExportSummaries"]
print(json.dumps({"status": d["ExportStatus"], "items": d.get("ItemCount"), "manifest": d.get("ExportManifest"),
                  "arn": d["ExportArn"], "listed": [e["ExportArn"] for e in l], "time": str(d["ExportTime"])}))
EOP
ok($ok, 'boto3: export_table_to_point_in_time, describe_export, list_exports') or diag($out);
my $r = eval { decode_json((split /\n/, $out)[-1]) } // {};
is($r->{status}, 'COMPLETED', 'the export completed');
is($r->{items}, 2500, 'ItemCount');
ok((grep { $_ eq ($r->{arn} // '') } @{ $r->{listed} // [] }), 'list_exports lists it');

# ---- the files, read from the store's disk
sub object
{
	my ($key) = @_;
	my $f = "$s3dir/$key._S3rver_object";
	return -f $f ? slurp_file($f) : undef;
}
my $summary_raw = object($r->{manifest} // 'none');
ok(defined $summary_raw, 'manifest-summary.json is in the bucket');
my $summary = eval { decode_json($summary_raw // '{}') } // {};
is($summary->{itemCount}, 2500, 'manifest-summary: itemCount');
is($summary->{outputFormat}, 'DYNAMODB_JSON', 'manifest-summary: outputFormat');
is($summary->{exportArn}, $r->{arn}, 'manifest-summary: exportArn');
is($summary->{s3Bucket}, 'dynexports', 'manifest-summary: s3Bucket');
like($summary->{exportTime} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'manifest-summary: exportTime');
(my $base = $r->{manifest} // '') =~ s/manifest-summary\.json$//;
like($base, qr{^run1/AWSDynamoDB/\d{14}-[0-9a-f]{8}/$}, 'the export directory: <prefix>/AWSDynamoDB/<ExportId>/');
is(object("${base}manifest-summary.checksum"), md5_hex($summary_raw // ''), 'manifest-summary.checksum');
my $files_raw = object($summary->{manifestFilesS3Key} // 'none') // '';
is(object("${base}manifest-files.checksum"), md5_hex($files_raw), 'manifest-files.checksum');
ok(defined object("${base}_started"), '_started');
my ($lines, $total, $bad) = (0, 0, 0);
my @files = map { decode_json($_) } grep { length } split /\n/, $files_raw;
ok(@files >= 1, 'manifest-files.json names the data files');
for my $f (@files)
{
	my $gz = object($f->{dataFileS3Key});
	ok(defined $gz, "data file $f->{dataFileS3Key} is in the bucket");
	(my $b64 = md5_base64($gz // '')) .= '==';
	is($f->{md5Checksum}, $b64, 'md5Checksum: base64 of the MD5 of the file');
	my $etagf = "$s3dir/$f->{dataFileS3Key}._S3rver_object.md5";
	is($f->{etag}, -f $etagf ? slurp_file($etagf) =~ s/\s+//gr : md5_hex($gz // ''), 'etag: the store\'s');
	my $plain;
	gunzip(\$gz => \$plain) or diag("gunzip: $GunzipError");
	my @l = split /\n/, $plain // '';
	is(scalar @l, $f->{itemCount}, 'lines = itemCount');
	for (@l)
	{
		my $j = eval { decode_json($_) };
		$bad++ unless $j && $j->{Item} && $j->{Item}{id}{N} && length($j->{Item}{blob}{S}) == 5120;
	}
	$total += $f->{itemCount};
}
is($total, 2500, 'the data files hold every item');
is($bad, 0, 'every line is {"Item": ...} with the item');
my @req = DynS3::requests($s3);
ok((grep { m{^PUT /dynexports/run1/AWSDynamoDB/\S+/data/[a-z0-9]{26}\.json\.gz\?partNumber=2&uploadId=} } @req),
	'the data file went up in a multipart upload');

ok(!(grep { / sse=/ } @req), 'no S3SseAlgorithm: no encryption header (the bucket\'s default applies)');

# ---- S3SseAlgorithm KMS: every object of the export is sent with the (signed) encryption headers
my ($sok, $sout) = boto3(<<"EOP");
r = c.export_table_to_point_in_time(TableArn="arn:aws:dynamodb:us-east-1:000000000000:table/Big",
                                    S3Bucket="dynexports", S3Prefix="kms", S3SseAlgorithm="KMS", S3SseKmsKeyId="key-7")
d = wait(r["ExportDescription"]["ExportArn"])
print(json.dumps([d["ExportStatus"], d.get("S3SseAlgorithm"), d.get("S3SseKmsKeyId")]))
EOP
is_deeply(eval { decode_json((split /\n/, $sout)[-1]) }, [ 'COMPLETED', 'KMS', 'key-7' ],
	'an export with S3SseAlgorithm KMS completes') or diag($sout);
my @kmsreq = grep { m{^(PUT|POST) /dynexports/kms/} } DynS3::requests($s3);
my @initial = grep { !/partNumber=|uploadId=/ } @kmsreq;    # single PUTs and multipart starts
ok(@initial >= 4, 'the export wrote its objects (' . scalar(@initial) . ' PUT or upload starts)');
is(scalar(grep { / ok sse=aws:kms kms=key-7$/ } @initial), scalar @initial,
	'each went with x-amz-server-side-encryption: aws:kms and the key id, signed (the store checks)');

# ---- data files of at most dynindex.export_file_size (uncompressed): several files
$node->safe_psql('postgres', q{ALTER SYSTEM SET dynindex.export_file_size = '4MB'; SELECT pg_reload_conf()});
sleep 1;
my $arn4 = $node->safe_psql('postgres', q{SELECT dynindex.export_table('Big', 'dynexports', 'split')});
my $st4 = '';
for (my $i = 0; $i < 600 && $st4 !~ /^(COMPLETED|FAILED)/; $i++)
{
	$st4 = $node->safe_psql('postgres', qq{SELECT status FROM dynindex.exports WHERE export_arn = '$arn4'});
	usleep(100_000);
}
is($st4, 'COMPLETED', 'an export in 4 MB data files');
my $m4 = eval { decode_json(object($node->safe_psql('postgres', qq{SELECT export_manifest FROM dynindex.exports WHERE export_arn = '$arn4'})) // '{}') } // {};
my @f4 = map { decode_json($_) } grep { length } split /\n/, (object($m4->{manifestFilesS3Key} // 'none') // '');
cmp_ok(scalar @f4, '>=', 3, 'several data files (12.8 MB of lines)');
my $sum4 = 0;
$sum4 += $_->{itemCount} for @f4;
is($sum4, 2500, 'their itemCounts add up to the items');
$node->safe_psql('postgres', q{ALTER SYSTEM RESET dynindex.export_file_size; SELECT pg_reload_conf()});

# An export's row (the SQL expression $what over dynindex.exports, starting with its status)
# once it is no longer IN_PROGRESS: polled every 0.1 s, at most $tries times.
sub export_final
{
	my ($arn, $what, $tries) = @_;
	my $st = '';
	for (my $i = 0; $i < $tries; $i++)
	{
		$st = $node->safe_psql('postgres', qq{SELECT $what FROM dynindex.exports WHERE export_arn = '$arn'});
		last if $st !~ /^IN_PROGRESS/;
		usleep(100_000);
	}
	return $st;
}

# ---- the store's errors fail the export cleanly
sub export_status
{
	my ($bucket, $prefix) = @_;
	my ($ok, $out) = boto3(<<"EOP");
r = c.export_table_to_point_in_time(TableArn="arn:aws:dynamodb:us-east-1:000000000000:table/Big",
                                    S3Bucket="$bucket", S3Prefix="$prefix")
d = wait(r["ExportDescription"]["ExportArn"])
print(json.dumps([d["ExportStatus"], d.get("FailureCode"), d.get("FailureMessage")]))
EOP
	return $ok ? decode_json((split /\n/, $out)[-1]) : [ 'ERROR', $out ];
}
my $e = export_status('denied', 'x');
is_deeply([ @$e[0, 1] ], [ 'FAILED', 'S3AccessDenied' ], 'a wrong secret: FAILED, S3AccessDenied') or diag(explain $e);
$e = export_status('missing', 'x');
is_deeply($e, [ 'FAILED', 'S3NoSuchBucket', 'The specified bucket does not exist' ], 'no such bucket at the store');
$e = export_status('notconfigured', 'x');
is_deeply($e, [ 'FAILED', 'S3NoSuchBucket', 'The specified bucket does not exist' ], 'a bucket no store is configured for');
DynS3::fault($s3, 'drop-uploads');
$e = export_status('dynexports', 'dropped');
is_deeply([ @$e[0, 1] ], [ 'FAILED', 'S3ServiceUnavailable' ], 'the connection lost mid-upload: FAILED, S3ServiceUnavailable') or diag(explain $e);
DynS3::fault($s3, 'none');
unlike(slurp_file($node->logfile), qr/\Q$SECRET\E|secret_access_key/, 'no secret in the server log');

# ---- the job's process yields the CPU to the writers (issue #28): SCHED_IDLE
# by default, dynindex.export_nice with dynindex.export_sched_idle off (Linux:
# the policy and nice value read from /proc/<pid>/stat)
sub job_sched
{
	my ($arn) = @_;
	for (my $i = 0; $i < 400; $i++)
	{
		my $pid = $node->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex job' AND query LIKE 'export %' LIMIT 1});
		if ($pid ne '' && open(my $fh, '<', "/proc/$pid/stat"))
		{
			my $line = <$fh>;
			close($fh);
			# the fields after "(comm)": state is field 3, nice 19, policy 41
			my @f = split / /, substr($line, rindex($line, ')') + 2);
			return ($f[41 - 3], $f[19 - 3]) if @f >= 39;
		}
		usleep(25_000);
	}
	return ('none', 'none');
}
SKIP:
{
	skip 'no /proc (the scheduling class is set on Linux only)', 4 unless -r "/proc/$$/stat";
	DynS3::fault($s3, 'slow-uploads');
	for my $case ([ 'on', '5 0', 'SCHED_IDLE (policy 5)' ], [ 'off', '0 10', 'nice 10, normal policy' ])
	{
		my ($setting, $want, $what) = @$case;
		$node->safe_psql('postgres', "ALTER SYSTEM SET dynindex.export_sched_idle = $setting; SELECT pg_reload_conf();");
		my $sarn = $node->safe_psql('postgres', qq{SELECT dynindex.export_table('Big', 'dynexports', 'sched-$setting')});
		is(join(' ', job_sched($sarn)), $want, "export_sched_idle = $setting: the job runs at $what");
		my $st = export_final($sarn, 'status', 600);
		is($st, 'COMPLETED', "export_sched_idle = $setting: the export completed");
	}
	DynS3::fault($s3, 'none');
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET dynindex.export_sched_idle; SELECT pg_reload_conf();');
}

# ---- while another session writes, the job pauses between slices of its work
# (dynindex.export_yield, issue #28), and the export is still whole; the pause
# it took is in its log line
{
	$node->safe_psql('postgres', 'CREATE TABLE churn (x text); ALTER SYSTEM SET dynindex.export_yield = 90; SELECT pg_reload_conf();');
	my ($out, $err) = ('', '');
	my $writer = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		  q{DO $$BEGIN FOR i IN 1 .. 10000000 LOOP INSERT INTO churn VALUES (repeat('x', 200)); END LOOP; END$$} ],
		'<', \undef, '>', \$out, '2>', \$err);
	# (a loop of INSERTs: WAL from its first row on)
	$node->poll_query_until('postgres', q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'DO $$BEGIN FOR i IN%'})
	  or die 'the writer did not start';
	my $log_pos = -s $node->logfile;
	my $yarn = $node->safe_psql('postgres', q{SELECT dynindex.export_table('Big', 'dynexports', 'yield')});
	my $st = export_final($yarn, q{status || ' ' || coalesce(item_count::text, '')}, 1200);
	my $writing = $node->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'DO $$BEGIN FOR i IN%' AND state = 'active'});
	$node->safe_psql('postgres', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'DO $$BEGIN FOR i IN%'});
	$writer->finish;
	is($st, 'COMPLETED 2500', 'an export while another session writes: COMPLETED with every item');
	my ($paused) = substr(slurp_file($node->logfile), $log_pos) =~ /export \d+: 2500 items in \d+ files, ([0-9.]+) s paused for writers \(dynindex.export_yield 90\)/;
	ok(defined $paused, 'the export\'s log line gives the time it paused for writers');
	SKIP:
	{
		skip 'the writer ended before the export did', 1 unless $writing eq '1';
		cmp_ok($paused // 0, '>', 0, 'the job paused while the other session wrote');
	}
	$node->safe_psql('postgres', 'DROP TABLE churn; ALTER SYSTEM RESET dynindex.export_yield; SELECT pg_reload_conf();');
}

# ---- WAL without transactions (what autovacuum, checkpoints and hint bits write) is not a
# writer: a session emitting non-transactional WAL messages in a loop does not make it pause
{
	my ($out, $err) = ('', '');
	my $noise = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		  q{DO $$BEGIN FOR i IN 1 .. 100000000 LOOP PERFORM pg_logical_emit_message(false, 'noise', repeat('x', 2000)); END LOOP; END$$} ],
		'<', \undef, '>', \$out, '2>', \$err);
	$node->poll_query_until('postgres', q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'DO $$BEGIN FOR i IN 1 .. 100000000%'})
	  or die 'the WAL source did not start';
	my $wal0 = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my $log_pos = -s $node->logfile;
	my $narn = $node->safe_psql('postgres', q{SELECT dynindex.export_table('Big', 'dynexports', 'nowriters')});
	my $st = export_final($narn, q{status || ' ' || coalesce(item_count::text, '')}, 1200);
	my $wal = $node->safe_psql('postgres', qq{SELECT pg_current_wal_insert_lsn() - '$wal0'::pg_lsn});
	$node->safe_psql('postgres', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'DO $$BEGIN FOR i IN 1 .. 100000000%'});
	$noise->finish;
	is($st, 'COMPLETED 2500', 'an export while another session writes WAL without transactions: COMPLETED');
	cmp_ok($wal, '>', 1_000_000, 'that session wrote WAL meanwhile');
	like(substr(slurp_file($node->logfile), $log_pos), qr/export \d+: 2500 items in \d+ files, 0\.000 s paused for writers/,
		'the job did not pause for it');
}

# ---- the job's process terminated mid-export (what a fast shutdown or pg_terminate_backend
# sends, here with a data file open): it exits cleanly — it used to free the file's MD5 state a
# second time and crash the server — and the job runs again and completes
{
	DynS3::fault($s3, 'slow-uploads');
	my $tarn = $node->safe_psql('postgres', q{SELECT dynindex.export_table('Big', 'dynexports', 'terminated')});
	my $writing = 0;
	for (my $i = 0; $i < 400 && !$writing; $i++)
	{
		$writing = grep { m{^PUT /dynexports/terminated/AWSDynamoDB/\S+/data/} } DynS3::requests($s3);
		usleep(25_000);
	}
	ok($writing, 'the export is writing a data file');
	my $log_pos = -s $node->logfile;
	is($node->safe_psql('postgres', q{SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE backend_type = 'dynindex job' AND query LIKE 'export %'}), '1', 'its process is terminated');
	DynS3::fault($s3, 'none');
	my $st = export_final($tarn, q{status || ' ' || coalesce(item_count::text, '')}, 600);
	my $log = substr(slurp_file($node->logfile), $log_pos);
	like($log, qr/terminating background worker "dynindex job" due to administrator command/, 'the job exited on the signal');
	unlike($log, qr/terminated by signal|server processes terminated/, 'no crash, no restart of the server');
	is($st, 'COMPLETED 2500', 'the job ran again and the export completed');
}

# ---- kill -9 of the postmaster mid-export: the job runs again after the restart
DynS3::fault($s3, 'slow-uploads');
my $arn = $node->safe_psql('postgres', q{SELECT dynindex.export_table('Big', 'dynexports', 'crash')});
like($arn, qr{/export/}, 'an export started');
my $started = 0;
for (my $i = 0; $i < 400 && !$started; $i++)
{
	$started = grep { m{^PUT /dynexports/crash/AWSDynamoDB/\S+/_started } } DynS3::requests($s3);
	usleep(25_000);
}
ok($started, 'the export is writing');
usleep(500_000);
ok(DynCrash::crash_node($node), 'kill -9 of the postmaster and its children');
DynS3::fault($s3, 'none');
$node->start;
my $status = export_final($arn, q{status || ' ' || coalesce(item_count::text, '') || ' ' || coalesce(failure_code, '')}, 600);
is($status, 'COMPLETED 2500 ', 'after the restart the export completed');
my $crash_summary = eval { decode_json(object($node->safe_psql('postgres',
	qq{SELECT export_manifest FROM dynindex.exports WHERE export_arn = '$arn'})) // '{}') } // {};
my @named = map { decode_json($_)->{dataFileS3Key} } grep { length } split /\n/,
	(object($crash_summary->{manifestFilesS3Key} // 'none') // '');
(my $crash_base = $crash_summary->{manifestFilesS3Key} // '') =~ s/manifest-files\.json$//;
my @present = sort map { s{^\Q$s3dir\E/}{}r =~ s/\._S3rver_object$//r }
	grep { /\._S3rver_object$/ } glob("$s3dir/${crash_base}data/*");
is_deeply(\@present, [ sort @named ], 'data/ holds exactly the files the manifest names');

$node->stop;
DynS3::kill9($s3);
done_testing();
