# A dynindex library built for another PostgreSQL major, loaded into this
# server, fails with PostgreSQL's own magic-block error: at LOAD (the session
# and the server go on) and from shared_preload_libraries (the server refuses
# to start, with a FATAL, and starts again once the setting is right).  Never
# a crash: PostgreSQL compares the magic block before it runs _PG_init.
#
# DYNINDEX_FOREIGN_LIB names a dynindex.so built for another major, and
# DYNINDEX_FOREIGN_MAJOR that major: test/bin/chroot.sh builds one with the
# host's PostgreSQL for the runs in other Debian releases.  Without it the
# test says so and skips (there is no second major on a plain machine).
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $lib = $ENV{DYNINDEX_FOREIGN_LIB} // '';
my $major = $ENV{DYNINDEX_FOREIGN_MAJOR} // '';
plan skip_all => 'no dynindex library of another PostgreSQL major (DYNINDEX_FOREIGN_LIB; chroot.sh sets it)'
  unless $lib ne '' && -f $lib && $major =~ /^\d+$/;

my $node = PostgreSQL::Test::Cluster->new('foreign_major');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', slurp_file('test/dynindex.conf')) if -f 'test/dynindex.conf';
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
my $server_major = $node->safe_psql('postgres', "SELECT current_setting('server_version_num')::int / 10000");
isnt($server_major, $major, "the library ($major) is of another major than the server ($server_major)");

# The foreign library beside the server's own, under a name of its own.
my $pkglibdir = $node->config_data('--pkglibdir');
my $foreign = "$pkglibdir/dynindex_foreign_$major.so";
copy($lib, $foreign) or die "copy $lib to $foreign: $!";

my $started_at = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my ($ret, $stdout, $stderr) = $node->psql('postgres', "LOAD 'dynindex_foreign_$major'");
isnt($ret, 0, 'LOAD of the foreign library fails');
like($stderr, qr/incompatible library .*dynindex_foreign_$major\.so.*: version mismatch/,
	"PostgreSQL's magic-block error");
like($stderr, qr/Server is version $server_major, library is version $major\./,
	'its detail names both majors');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server goes on after the failed LOAD');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started_at,
	'no crash restart');

# From shared_preload_libraries: the server refuses to start, cleanly.
$node->stop;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex_foreign_$major'\n");
my $started = $node->start(fail_ok => 1);
ok(!$started, 'the server does not start with the foreign library preloaded');
my $log = slurp_file($node->logfile);
like($log, qr/FATAL:\s+incompatible library .*dynindex_foreign_$major\.so.*: version mismatch/,
	'a FATAL magic-block error in the log');
unlike($log, qr/terminated by signal|PANIC/, 'no process was killed by a signal, no PANIC');

$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
is($node->safe_psql('postgres', "SELECT 'ok'"), 'ok', 'with its own library the server starts again');
$node->stop;
unlink $foreign;
done_testing();
