# DynNet — a TCP proxy run by a test between two servers, to cut the
# network between them (test/t/136_global_partition.pl).
#
# DynNet->new($node) forks a Perl process that listens on a free loopback
# port and forwards each connection to $node's TCP port (tcp_listen($node)
# makes the server listen on 127.0.0.1).  The test then:
#   $p->cut('drop')       every established connection is reset, both ways,
#                         and each new one is accepted and reset at once:
#                         a partition that a router reports;
#   $p->cut('blackhole')  nothing is forwarded any more, in either direction,
#                         and nothing is closed: established connections go
#                         silent, new ones are accepted and never answered —
#                         a partition that drops packets, which only a
#                         timeout of the client notices;
#   $p->heal              forwarding resumes: the held connections go on
#                         where they stopped (nothing was lost, as TCP
#                         retransmits across a partition that heals), the
#                         ones accepted meanwhile reach the server now.
# Each command returns once the proxy has done it.  $p->stop ends the
# proxy (it also ends when the test exits).
package DynNet;

use strict;
use warnings;
use Errno qw(EAGAIN EINTR EWOULDBLOCK);
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC SOL_SOCKET SO_LINGER);
use PostgreSQL::Test::Cluster;
use Exporter 'import';

our @EXPORT = qw(tcp_listen);

my %proxies;    # pid => 1, ended at exit

# $node listens on 127.0.0.1 as well (its port); restarts it.
sub tcp_listen
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1'\n");
	$node->restart;
	return;
}

# A proxy to $node's port; its own port is free on 127.0.0.1.
sub new
{
	my ($class, $node) = @_;
	my $target = $node->port;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
		Listen => 64, ReuseAddr => 1) or die "DynNet: cannot listen on 127.0.0.1:$port: $!";
	socketpair(my $parent, my $child, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		close $parent;
		# never run the test's END blocks (they would stop its servers)
		eval { serve($listen, $target, $child) };
		print STDERR "DynNet: the proxy failed: $@" if $@;
		POSIX::_exit(0);
	}
	close $child;
	close $listen;
	$parent->autoflush(1);
	$proxies{$pid} = 1;
	return bless { pid => $pid, port => $port, ctl => $parent, name => $node->name }, $class;
}

sub port { return $_[0]{port} }

# A libpq connection string to the proxied server's database postgres.
sub conninfo
{
	my ($self) = @_;
	return "host=127.0.0.1 port=$self->{port} dbname=postgres";
}

# Send one command to the proxy; its answer.
sub command
{
	my ($self, $cmd) = @_;
	print { $self->{ctl} } "$cmd\n";
	my $answer = readline($self->{ctl}) // die "DynNet: the proxy to $self->{name} is gone";
	chomp $answer;
	return $answer;
}

# cut('drop' | 'blackhole'); heal; connections: how many are forwarded or held.
sub cut
{
	my ($self, $how) = @_;
	die "DynNet: cut('drop') or cut('blackhole')" unless $how =~ /^(drop|blackhole)$/;
	return $self->command($how);
}
sub heal { return $_[0]->command('heal') }
sub connections { return $_[0]->command('count') }

sub stop
{
	my ($self) = @_;
	return unless $proxies{ $self->{pid} };
	kill 'TERM', $self->{pid};
	waitpid($self->{pid}, 0);
	delete $proxies{ $self->{pid} };
	return;
}

END
{
	for my $pid (keys %proxies)
	{
		kill 'TERM', $pid;
		waitpid($pid, 0);
	}
}

# ---- the proxy process ----

# Close a socket with a reset (SO_LINGER 0), as a dropped connection ends.
sub reset_close
{
	my ($s) = @_;
	setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
	close $s;
	return;
}

# Write all of $data to $s (blocking); false if the peer is gone.
sub write_all
{
	my ($s, $data) = @_;
	my $off = 0;
	while ($off < length $data)
	{
		my $n = syswrite($s, $data, length($data) - $off, $off);
		if (!defined $n)
		{
			next if $! == EINTR || $! == EAGAIN || $! == EWOULDBLOCK;
			return 0;
		}
		$off += $n;
	}
	return 1;
}

sub serve
{
	my ($listen, $target, $ctl) = @_;
	my $mode = 'up';
	my %peer;       # socket (string) => its other end
	my %sock;       # socket (string) => socket
	my @held;       # accepted while blackholed: no server side yet
	my $sel = IO::Select->new($listen, $ctl);

	$SIG{TERM} = sub { POSIX::_exit(0) };
	$SIG{PIPE} = 'IGNORE';
	$ctl->autoflush(1);

	my $pair = sub {
		my ($client) = @_;
		my $server = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $target, Proto => 'tcp');
		if (!$server)
		{
			reset_close($client);
			return;
		}
		@peer{ "$client", "$server" } = ($server, $client);
		@sock{ "$client", "$server" } = ($client, $server);
		$sel->add($client, $server) if $mode eq 'up';
		return;
	};
	my $drop = sub {
		my ($s) = @_;
		my $o = delete $peer{"$s"};
		delete $sock{"$s"};
		$sel->remove($s);
		reset_close($s);
		if ($o)
		{
			delete $peer{"$o"};
			delete $sock{"$o"};
			$sel->remove($o);
			reset_close($o);
		}
		return;
	};

	for (;;)
	{
		my @ready = $sel->can_read;
		for my $s (@ready)
		{
			if ($s == $ctl)
			{
				my $cmd = readline($ctl);
				POSIX::_exit(0) unless defined $cmd;    # the test is gone
				chomp $cmd;
				if ($cmd eq 'drop')
				{
					for my $k (keys %sock)
					{
						$drop->($sock{$k}) if $sock{$k};    # gone with its other end
					}
					reset_close($_) for @held;
					@held = ();
					$mode = 'drop';
				}
				elsif ($cmd eq 'blackhole')
				{
					$sel->remove($_) for values %sock;
					$mode = 'blackhole';
				}
				elsif ($cmd eq 'heal')
				{
					$mode = 'up';
					$sel->add($_) for values %sock;
					$pair->($_) for @held;
					@held = ();
				}
				elsif ($cmd eq 'count')
				{
					print $ctl scalar(keys %sock) / 2 + scalar(@held), "\n";
					next;
				}
				print $ctl "ok\n";
				next;
			}
			if ($s == $listen)
			{
				my $client = $listen->accept or next;
				if ($mode eq 'drop') { reset_close($client) }
				elsif ($mode eq 'blackhole') { push @held, $client }
				else { $pair->($client) }
				next;
			}
			next unless $peer{"$s"};    # dropped earlier in this round
			my $buf;
			my $n = sysread($s, $buf, 65536);
			next if !defined $n && ($! == EINTR || $! == EAGAIN || $! == EWOULDBLOCK);
			if (!$n || !write_all($peer{"$s"}, $buf))
			{
				# one side closed: close the other (its unread data is gone with it)
				my $o = delete $peer{"$s"};
				delete $peer{"$o"};
				delete @sock{ "$s", "$o" };
				$sel->remove($s, $o);
				shutdown($o, 1);
				close $o;
				close $s;
			}
		}
	}
}

1;
