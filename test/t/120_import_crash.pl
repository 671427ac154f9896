# ImportTable's background job (src/worker/jobs.c, src/exchange/import.c)
# under crashes and limits, from a directory store:
#  - gzip and zstd objects; a truncated gzip and a corrupt zstd object end
#    that object with one error, the others load;
#  - kill -9 of the postmaster mid-import: after the restart the database's
#    worker starts the job again, which resumes with the tasks not done;
#    the import ends COMPLETED with every item counted once, and the table is
#    never ACTIVE while its import is IN_PROGRESS;
#  - a key in two objects loaded at once by the job's two processes: the
#    later object's item remains although its transaction commits first;
#  - kill -9 while the second of three objects loads, after the third is in:
#    loaded again, in a later transaction; a key in both keeps the third's item;
#  - an unreadable object fails the import while the other process loads:
#    FAILED, the table dropped, the helper ended;
#  - with max_worker_processes too small for every job at once, the jobs
#    wait for a slot and all complete (none is lost).
use strict;
use warnings;
use lib 'test/t';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IO::Compress::Gzip qw(gzip $GzipError);
use File::Path qw(make_path);
use Time::HiRes qw(usleep);
use DynCrash;

my $node = PostgreSQL::Test::Cluster->new('import_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "dynindex.worker_naptime = 100\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION dynindex');

my $dir = $node->data_dir . '/exchange/imp';
make_path($dir);
$node->safe_psql('postgres', q{SELECT dynindex.set_object_store('imp', 'directory', directory => 'exchange/imp')});

# $n items of partition $p as DynamoDB JSON lines
sub lines
{
	my ($p, $n) = @_;
	my $pad = 'x' x 150;
	my $out = '';
	$out .= sprintf(qq({"Item": {"pk": {"S": "p%d-%d"}, "sk": {"N": "%d"}, "g": {"S": "g%d"}, "pad": {"S": "%s"}}}\n),
		$p, $_, $_, $_ % 13, $pad) for 1 .. $n;
	return $out;
}
sub write_gz
{
	my ($path, $data) = @_;
	make_path($1) if $path =~ m{^(.*)/[^/]+$};
	gzip(\$data => $path) or die $GzipError;
}
sub write_file
{
	my ($path, $data) = @_;
	make_path($1) if $path =~ m{^(.*)/[^/]+$};
	open(my $fh, '>', $path) or die "$path: $!";
	binmode $fh;
	print $fh $data;
	close $fh;
}
sub import_table
{
	my ($name, $prefix, $compression) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT dynindex.api('ImportTable', jsonb_build_object(
		  'S3BucketSource', jsonb_build_object('S3Bucket', 'imp', 'S3KeyPrefix', '$prefix'),
		  'InputFormat', 'DYNAMODB_JSON', 'InputCompressionType', '$compression',
		  'TableCreationParameters', jsonb_build_object('TableName', '$name', 'BillingMode', 'PAY_PER_REQUEST',
		    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
		    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
		                              {"AttributeName": "g", "AttributeType": "S"}]'::jsonb,
		    'GlobalSecondaryIndexes', '[{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
		                                 "Projection": {"ProjectionType": "ALL"}}]'::jsonb)))->'ImportTableDescription'->>'ImportArn'});
}
sub wait_import
{
	my ($arn) = @_;
	return $node->safe_psql('postgres', qq{SELECT dynindex.wait_for_import('$arn', '300 s')});
}
sub counts
{
	my ($arn) = @_;
	return $node->safe_psql('postgres', qq{SELECT status || ' ' || processed_items || ' ' || imported_items || ' ' || error_count
		FROM dynindex.imports WHERE import_arn = '$arn'});
}

# ---- gzip, zstd, a truncated gzip, a corrupt zstd
write_gz("$dir/gz/a.json.gz", lines(1, 300));
write_gz("$dir/gz/b.json.gz", lines(2, 300));
{
	my $gz;
	my $text = lines(3, 2000);
	gzip(\$text => \$gz) or die $GzipError;
	write_file("$dir/gz/c.json.gz", substr($gz, 0, int(length($gz) / 2)));    # truncated
}
my $zin = $node->basedir . '/z.json';
write_file($zin, lines(4, 300));
make_path("$dir/zst");
system('zstd', '-q', '-f', $zin, '-o', "$dir/zst/a.json.zst") == 0 or die "zstd failed";
{
	open(my $fh, '<:raw', "$dir/zst/a.json.zst") or die;
	local $/;
	my $z = <$fh>;
	close $fh;
	substr($z, 20, 8) = 'CORRUPT!';
	write_file("$dir/zst/b.json.zst", $z);
}
my $gz_arn = import_table('GzT', 'gz/', 'GZIP');
my $zst_arn = import_table('ZstT', 'zst/', 'ZSTD');
is(wait_import($gz_arn), 'COMPLETED', 'gzip import completed');
my ($st, $processed, $imported, $errors) = split / /, counts($gz_arn);
is($imported >= 600 && $imported < 2600 ? 'ok' : $imported, 'ok', 'the whole objects and part of the truncated one are in');
is($errors, 1, 'the truncated gzip is one error');
is($processed, $imported + $errors, 'processed = imported + errors');
is($node->safe_psql('postgres', qq{SELECT message FROM dynindex.import_log WHERE import_arn = '$gz_arn'}),
	'The GZIP stream is truncated', 'the error names the truncated stream');
is($node->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName": "GzT"}')->'Table'->>'ItemCount'}),
	$imported, 'ItemCount is the imported count');
is(wait_import($zst_arn), 'COMPLETED', 'zstd import completed');
($st, $processed, $imported, $errors) = split / /, counts($zst_arn);
is("$imported $errors", '300 1', 'the good zstd object is in; the corrupt one is one error');

# ---- kill -9 mid-import
my $files = 12;
write_gz(sprintf("$dir/big/%02d.json.gz", $_), lines(100 + $_, 4000)) for 1 .. $files;
my $arn = import_table('Big', 'big/', 'GZIP');
my $done = 0;
my $deferred = 0;
my $never_active_half = 1;
for (1 .. 6000)
{
	# the table and the import in one snapshot: IN_PROGRESS means CREATING
	my $s = $node->safe_psql('postgres', qq{SELECT i.status || ' ' || i.files_done || ' ' ||
		(dynindex.api('DescribeTable', '{"TableName": "Big"}')->'Table'->>'TableStatus') || ' ' ||
		(SELECT count(*) FROM dynindex.import_tasks t WHERE t.import_id = i.import_id AND t.kind IN ('table_index', 'index'))
		FROM dynindex.imports i WHERE i.import_arn = '$arn'});
	my ($status, $fd, $ts, $nd) = split / /, $s;
	$never_active_half = 0 if $status eq 'IN_PROGRESS' && $ts ne 'CREATING';
	$done = $fd;
	$deferred = $nd;
	last if $fd >= 2 || $status ne 'IN_PROGRESS';
	usleep(20_000);
}
ok($done >= 2 && $done < $files, "crashing after $done of $files objects");
# the bulk load: the btrees of the table (primary key, segment index) and of its GSI
# (its unique btree on the key, base-key index) dropped, their definitions kept
is($deferred, 4, 'the four btrees of the table and its GSI are deferred during the load');
ok(crash_node($node), 'postmaster and children killed');
$node->start;
# right after the restart: still CREATING, invisible to item operations
like($node->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName": "Big"}')->'Table'->>'TableStatus'}),
	qr/^(CREATING|ACTIVE)$/, 'the table exists after the restart');
for (1 .. 3000)
{
	my $s = $node->safe_psql('postgres', qq{SELECT i.status || ' ' ||
		(dynindex.api('DescribeTable', '{"TableName": "Big"}')->'Table'->>'TableStatus')
		FROM dynindex.imports i WHERE i.import_arn = '$arn'});
	my ($status, $ts) = split / /, $s;
	$never_active_half = 0 if $status eq 'IN_PROGRESS' && $ts ne 'CREATING';
	last if $status ne 'IN_PROGRESS';
	usleep(50_000);
}
is(wait_import($arn), 'COMPLETED', 'the import resumed after the crash and completed');
ok($never_active_half, 'the table was never ACTIVE while its import was IN_PROGRESS');
is(counts($arn), 'COMPLETED ' . ($files * 4000) . ' ' . ($files * 4000) . ' 0', 'every item counted once');
is($node->safe_psql('postgres', q{SELECT dynindex.api('DescribeTable', '{"TableName": "Big"}')->'Table'->>'ItemCount'}),
	$files * 4000, 'every item is in the table once');
is($node->safe_psql('postgres', q{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('Big')}),
	'ByG 0 0 0', 'the GSI matches the table');
# every btree built again after the crash, valid, with the names CreateTable gave them
is($node->safe_psql('postgres', q{SELECT string_agg(n, ',' ORDER BY n COLLATE "C") FROM (
		SELECT regexp_replace(i.indexrelid::regclass::text, '^dynindex_data\.t[0-9]+', 't')
		|| CASE WHEN i.indisvalid AND i.indisready THEN '' ELSE ' (invalid)' END AS n
		FROM pg_index i WHERE i.indrelid::regclass::text ~ ('^' || (SELECT storage FROM dynindex.tables WHERE table_name = 'Big') || '(_i[0-9]+)?$')) x}),
	't_i0_index_key_idx,t_i0_key_hash_idx,t_key_hash_pk_sk_idx,t_pkey',
	'the btrees of the table and its GSI are all there after the import');
is($node->safe_psql('postgres', qq{SELECT string_agg(t.kind || ' ' || (t.done_by IS NOT NULL), ',' ORDER BY t.kind)
		FROM (SELECT DISTINCT t.kind, t.done_by IS NOT NULL AS done_by FROM dynindex.import_tasks t
		JOIN dynindex.imports i USING (import_id) WHERE i.import_arn = '$arn') t}),
	'constraint true,index true,object true,table_index true', 'every task is done: no btree is left deferred, no constraint unattached');
cmp_ok($node->safe_psql('postgres', qq{SELECT j.attempts FROM dynindex.jobs j JOIN dynindex.imports i ON i.import_id = j.job_id WHERE i.import_arn = '$arn'}),
	'>=', 2, 'the job ran again after the restart');

# A key imported from two objects: the later object's item remains, every other
# item is in once, and the GSI (filled again from the settled table) matches it.
sub settled
{
	my ($table, $pk, $from, $count) = @_;
	is($node->safe_psql('postgres', qq{SELECT dynindex.api('GetItem', '{"TableName": "$table", "Key": {"pk": {"S": "$pk"}, "sk": {"N": "1"}}}')->'Item'->'from'->>'S'}),
		$from, "$table: the later object's item remains");
	is($node->safe_psql('postgres', qq{SELECT dynindex.api('DescribeTable', '{"TableName": "$table"}')->'Table'->>'ItemCount'}),
		$count, "$table: every other item is in once");
	is($node->safe_psql('postgres', qq{SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('$table')}),
		'ByG 0 0 0', "$table: the GSI matches the settled table");
}

# ---- duplicate keys across objects loaded at once: the later object's item wins
# (the object's number decides, not its transaction's: the helper process loads
# the one-item second object while the job's process reads the first one, 1,000
# items of 100 KB)
{
	my $pad = 'y' x 100_000;
	my $big = join('', map { qq({"Item": {"pk": {"S": "big$_"}, "sk": {"N": "1"}, "g": {"S": "g1"}, "pad": {"S": "$pad"}}}\n) } 1 .. 1000);
	$big .= qq({"Item": {"pk": {"S": "dup"}, "sk": {"N": "1"}, "g": {"S": "g1"}, "from": {"S": "first"}}}\n);
	write_gz("$dir/dup/a.json.gz", $big);
	write_gz("$dir/dup/b.json.gz",
		qq({"Item": {"pk": {"S": "dup"}, "sk": {"N": "1"}, "g": {"S": "g2"}, "from": {"S": "second"}}}\n));
	my $darn = import_table('Dup', 'dup/', 'GZIP');
	is(wait_import($darn), 'COMPLETED', 'the import with a key in both objects completed');
	my $id = $node->safe_psql('postgres', qq{SELECT import_id FROM dynindex.imports WHERE import_arn = '$darn'});
	like(slurp_file($node->logfile), qr/import $id helper done: loaded 1 objects/,
		'the helper process loaded one of the two objects');
	settled('Dup', 'dup', 'second', 1001);
	is($node->safe_psql('postgres', q{SELECT dynindex.api('Query', '{"TableName": "Dup", "IndexName": "ByG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "g1"}}}')->'Items' @? '$[*] ? (@.pk.S == "dup")'}),
		'f', 'the overwritten item is not in the GSI');
}

# ---- the same keys with the same GSI key in two objects: the GSI's unique btree is
# built only after the table's primary key has settled them (its task is of a later
# kind), or it would meet each key's two entries
{
	my $items = join('', map { qq({"Item": {"pk": {"S": "same$_"}, "sk": {"N": "1"}, "g": {"S": "g1"}, "from": {"S": "OBJ"}}}\n) } 1 .. 2000);
	write_gz("$dir/same/a.json.gz", $items =~ s/OBJ/first/gr);
	write_gz("$dir/same/b.json.gz", $items =~ s/OBJ/second/gr);
	my $sarn = import_table('Same', 'same/', 'GZIP');
	is(wait_import($sarn), 'COMPLETED', 'the import of 2,000 keys each in both objects, same GSI keys, completed');
	settled('Same', 'same7', 'second', 2000);
	is($node->safe_psql('postgres', qq{SELECT max(t.done_by::text::bigint) FILTER (WHERE t.kind = 'table_index')
			< min(t.done_by::text::bigint) FILTER (WHERE t.kind = 'index')
		FROM dynindex.import_tasks t JOIN dynindex.imports i USING (import_id) WHERE i.import_arn = '$sarn'}),
		't', "the table's btrees were built before the GSI's");
}

# ---- a crash while the helper loads the second of three objects, after the third is
# in: the second is loaded again after the restart, in a later transaction than the
# third; a key in both keeps the third's item (the object's number decides)
{
	my $pad = 'z' x 30_000;
	write_gz("$dir/retry/a.json.gz", lines(500, 10));
	write_gz("$dir/retry/b.json.gz",
		join('', map { qq({"Item": {"pk": {"S": "slow$_"}, "sk": {"N": "1"}, "g": {"S": "g1"}, "pad": {"S": "$pad"}}}\n) } 1 .. 4000)
		  . qq({"Item": {"pk": {"S": "both"}, "sk": {"N": "1"}, "g": {"S": "g1"}, "from": {"S": "second"}}}\n));
	write_gz("$dir/retry/c.json.gz",
		qq({"Item": {"pk": {"S": "both"}, "sk": {"N": "1"}, "g": {"S": "g2"}, "from": {"S": "third"}}}\n));
	my $rarn = import_table('Retry', 'retry/', 'GZIP');
	my $state = '';
	for (1 .. 3000)
	{
		$state = $node->safe_psql('postgres', qq{SELECT string_agg(coalesce((t.done_by IS NOT NULL)::text, '?'), ',' ORDER BY t.task_no)
			FROM dynindex.import_tasks t JOIN dynindex.imports i USING (import_id)
			WHERE i.import_arn = '$rarn' AND t.kind = 'object'});
		last if $state eq 'true,false,true';
		usleep(10_000);
	}
	is($state, 'true,false,true', 'the third object is in while the second one loads');
	ok(crash_node($node), 'postmaster and children killed mid-object');
	$node->start;
	is(wait_import($rarn), 'COMPLETED', 'the import completed after the restart');
	is($node->safe_psql('postgres', qq{SELECT string_agg(t.target, ',' ORDER BY t.done_by::text::bigint)
			FROM dynindex.import_tasks t JOIN dynindex.imports i USING (import_id)
			WHERE i.import_arn = '$rarn' AND t.kind = 'object'}),
		'retry/a.json.gz,retry/c.json.gz,retry/b.json.gz', 'the second object\'s transaction came after the third\'s');
	settled('Retry', 'both', 'third', 4011);
}

# ---- an object that cannot be read fails the import while the other process
# loads: the import is FAILED, its table dropped, and no helper is left behind
{
	write_gz("$dir/bad/$_.json.gz", lines(300 + ord($_), 60000)) for qw(a b);
	write_gz("$dir/bad/c.json.gz", lines(400, 10));
	chmod(0000, "$dir/bad/c.json.gz") or die "chmod: $!";
	my $farn = import_table('Bad', 'bad/', 'GZIP');
	is(wait_import($farn), 'FAILED', 'an unreadable object fails the import');
	my $id = $node->safe_psql('postgres', qq{SELECT import_id FROM dynindex.imports WHERE import_arn = '$farn'});
	is($node->safe_psql('postgres', q{SELECT dynindex.api('ListTables', '{}')->'TableNames' ? 'Bad'}),
		'f', 'the failed import\'s table is gone');
	my $left = '';
	for (1 .. 100)
	{
		$left = $node->safe_psql('postgres', qq{SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dynindex import $id helper'});
		last if $left eq '0';
		usleep(50_000);
	}
	is($left, '0', 'no helper process is left');
	chmod(0644, "$dir/bad/c.json.gz");
}

# ---- more jobs than worker slots: they wait, none is lost
$node->append_conf('postgresql.conf', "max_worker_processes = 5\n");
$node->restart;
write_gz("$dir/many/a.json.gz", lines(7, 2000));
my @arns = map { import_table("Many$_", 'many/', 'GZIP') } 1 .. 6;
is(join(',', map { wait_import($_) } @arns), join(',', ('COMPLETED') x 6), 'six imports with max_worker_processes = 5 all completed');
is($node->safe_psql('postgres', q{SELECT count(*) FROM dynindex.jobs WHERE state <> 'done'}), '0', 'no job left behind');

$node->stop;
done_testing();
