# A dynindex library built for another PostgreSQL major, loaded into this
# server, fails with PostgreSQL's own error: at LOAD (the session and the
# server go on) and from shared_preload_libraries (the server refuses to start,
# with a FATAL, and starts again once the setting is right).  Never a crash:
# the loader resolves every symbol and PostgreSQL compares the magic block
# before anything of the library runs.
#
# DYNINDEX_FOREIGN_LIB names a dynindex.so built for another major, and
# DYNINDEX_FOREIGN_MAJOR that major: test/bin/chroot.sh builds one for the runs
# in other Debian releases (for sid's 18 with trixie's 17, where every symbol
# resolves and the magic block speaks; for trixie's 17 with this machine's 15,
# whose IsBackgroundWorker 17 no longer has).  Without it the
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
# PostgreSQL refuses it in one of two ways, both its own errors: the dynamic
# loader (dlopen with RTLD_NOW) fails first when the library names a symbol the
# other major lacks ("could not load library ...: undefined symbol"); otherwise
# the magic block is compared ("incompatible library ...: version mismatch").
like($stderr,
	qr/ERROR:\s+(incompatible library .*dynindex_foreign_$major\.so.*: version mismatch|could not load library .*dynindex_foreign_$major\.so.*: undefined symbol: \w+)/,
	"PostgreSQL's own error: " . ($stderr =~ /(version mismatch|undefined symbol: \w+)/ ? $1 : 'none'));
if ($stderr =~ /version mismatch/)
{
	like($stderr, qr/Server is version $server_major, library is version $major\./, 'the magic block names both majors');
}
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server goes on after the failed LOAD');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started_at,
	'no crash restart');

# From shared_preload_libraries: the server refuses to start, cleanly.
$node->stop;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex_foreign_$major'\n");
my $started = $node->start(fail_ok => 1);
ok(!$started, 'the server does not start with the foreign library preloaded');
my $log = slurp_file($node->logfile);
like($log, qr/FATAL:\s+(incompatible library|could not load library) .*dynindex_foreign_$major\.so/,
	'a FATAL error naming the library in the log');
unlike($log, qr/terminated by signal|PANIC/, 'no process was killed by a signal, no PANIC');

$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dynindex'\n");
$node->start;
is($node->safe_psql('postgres', "SELECT 'ok'"), 'ok', 'with its own library the server starts again');
$node->stop;
unlink $foreign;
done_testing();
