# DynWriters — writers that record what they wrote, and the check that no
# write was lost (test/t/135_global_three.pl, 136_global_partition.pl).
#
# Each region's server gets a local (not replicated) table acklog and a
# function w_write(k, k2, d, client) that makes one write of table Glob
# (DynGlobal.pm) over keys p1..pN: a PutItem, an UpdateItem (ADD n, a
# counter), a DeleteItem or a TransactWriteItems (a put and a counter
# update of two keys).  Every write carries a tag w (region/client/number)
# in the item, and in the same (sub)transaction as the write acklog gets
# one row per item it changed: the key, the tag, and the replication stamp
# and region the write gave the item (key_stamps: its row's, or with no item
# its tombstone in dynindex.replication_stamps, read while the write still
# holds the item's row lock).  A write that commits —
# every acknowledged one among them — has its rows; one that fails (a
# deadlock with the apply worker, a transaction cancelled) has none.
#
# The check: for each key, the write that must win everywhere is the one
# with the greatest (stamp, region) among every region's acklog (last writer
# wins); every region must hold exactly that — the item with its tag, or no
# item when it was a delete — and no item no write explains.  So a write
# that committed in a region is lost nowhere unless a later write of the
# same item (by that order) overwrote it.
package DynWriters;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(writers_setup writers_start writers_finish lww_check);

# The number of keys the writers share.
our $KEYS = 100;

# acklog and w_write on $n.
sub writers_setup
{
	my ($n) = @_;
	$n->safe_psql('postgres', <<'SQL');
CREATE TABLE acklog (k text NOT NULL, w text NOT NULL, stamp numeric NOT NULL, region text NOT NULL, deleted boolean NOT NULL);
CREATE SEQUENCE wseq;
-- the replication stamp of keys p<k> of Glob: the item's row's, or with no item its tombstone's
CREATE FUNCTION key_stamps(keys int[]) RETURNS TABLE (k text, stamp numeric, region text, deleted boolean)
LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT ''p'' || kk, extract(epoch FROM CASE WHEN i.pk IS NULL THEN s.stamp ELSE i.stamp END) * 1000000,
            CASE WHEN i.pk IS NULL THEN s.region ELSE i.region END, i.pk IS NULL
       FROM unnest($1) kk
       CROSS JOIN LATERAL (SELECT dynindex.encode_key(jsonb_build_object(''S'', ''p'' || kk)) AS pk,
                                  dynindex.encode_key(''{"N": "1"}'') AS sk) x
       LEFT JOIN %s i ON i.pk = x.pk AND i.sk = x.sk
       LEFT JOIN dynindex.replication_stamps s ON s.table_num = %s AND s.pk = x.pk AND s.sk = x.sk
      WHERE i.pk IS NOT NULL OR s.deleted',
    (SELECT storage FROM dynindex.tables WHERE table_name = 'Glob'),
    (SELECT num FROM dynindex.tables WHERE table_name = 'Glob')) USING keys;
END $f$;
CREATE FUNCTION w_write(k int, k2 int, d int, client int) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE
  w text := current_setting('dynindex.region') || '/' || client || '/' || nextval('wseq');
  key1 jsonb := jsonb_build_object('pk', jsonb_build_object('S', 'p' || k), 'sk', jsonb_build_object('N', '1'));
  key2 jsonb := jsonb_build_object('pk', jsonb_build_object('S', 'p' || k2), 'sk', jsonb_build_object('N', '1'));
  add jsonb := jsonb_build_object(':one', jsonb_build_object('N', '1'), ':g', jsonb_build_object('S', 'g' || (k % 7)),
                                  ':w', jsonb_build_object('S', w));
  keys int[] := ARRAY[k];
  r jsonb;
BEGIN
  BEGIN
    IF d = 1 THEN
      r := dynindex.api('DeleteItem', jsonb_build_object('TableName', 'Glob', 'Key', key1, 'ReturnValues', 'ALL_OLD'));
      IF NOT r ? 'Attributes' THEN
        RETURN false;            -- nothing deleted: nothing changed, nothing replicated
      END IF;
    ELSIF d <= 4 THEN
      PERFORM dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Glob', 'Key', key1,
        'UpdateExpression', 'ADD n :one SET g = :g, w = :w', 'ExpressionAttributeValues', add));
    ELSIF d = 5 AND k2 <> k THEN
      PERFORM dynindex.api('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
        jsonb_build_object('Put', jsonb_build_object('TableName', 'Glob', 'Item', key1 || jsonb_build_object(
          'g', jsonb_build_object('S', 'g' || (k % 7)), 'w', jsonb_build_object('S', w), 'v', jsonb_build_object('S', 'txn')))),
        jsonb_build_object('Update', jsonb_build_object('TableName', 'Glob', 'Key', key2,
          'UpdateExpression', 'ADD n :one SET w = :w', 'ExpressionAttributeValues',
          jsonb_build_object(':one', jsonb_build_object('N', '1'), ':w', jsonb_build_object('S', w)))))));
      keys := ARRAY[k, k2];
    ELSE
      PERFORM dynindex.api('PutItem', jsonb_build_object('TableName', 'Glob', 'Item', key1 || jsonb_build_object(
        'g', jsonb_build_object('S', 'g' || (k % 7)), 'w', jsonb_build_object('S', w),
        'v', jsonb_build_object('N', (k * 1000 + d)::text))));
    END IF;
    -- the stamps this write gave its items (their rows are locked by it until it commits)
    INSERT INTO acklog SELECT ks.k, w, ks.stamp, ks.region, ks.deleted FROM key_stamps(keys) ks;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'w_write: no replication stamp for the write %', w;
    END IF;
  EXCEPTION WHEN deadlock_detected OR SQLSTATE 'YD005' OR SQLSTATE 'YD006' THEN
    RETURN false;                -- a deadlock with the apply worker, TransactionCanceled, TransactionConflict
  END;
  RETURN true;
END $f$;
SQL
	return;
}

# The pgbench script of the writers (one write per transaction).
my $script;
sub script
{
	return $script if defined $script;
	$script = "$PostgreSQL::Test::Utils::tmp_check/global_writers.sql";
	open(my $fh, '>', $script) or die "$script: $!";
	print $fh "\\set k random(1, $KEYS)\n\\set k2 random(1, $KEYS)\n\\set d random(1, 10)\n"
	  . "SELECT w_write(:k, :k2, :d, :client_id);\n";
	close($fh);
	return $script;
}

# $clients writers on $n for $secs seconds, in the background; at most
# $rate writes a second in all when given.
sub writers_start
{
	my ($n, $clients, $secs, $rate) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start([ 'pgbench', '-n', '-c', $clients, '-j', 1, '-T', $secs, ($rate ? ('-R', $rate) : ()),
		'-f', script(), '-h', $n->host, '-p', $n->port, 'postgres' ], '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, name => $n->name };
}

# Wait for writers; the number of writes pgbench counts as done, and its
# errors (an error other than the conflicts w_write takes as a failed write
# ends a writer: none is expected unless its server was killed).
sub writers_finish
{
	my ($w) = @_;
	$w->{h}->finish;
	my ($done) = ${ $w->{out} } =~ /number of transactions actually processed: (\d+)/;
	my @errors = grep { /ERROR|FATAL|abort/i } split /\n/, ${ $w->{err} };
	note("writers on $w->{name}: " . ($done // 0) . ' transactions' . (@errors ? "; $errors[0]" : ''));
	return ($done // 0, scalar @errors);
}

# Every region holds, for every key, what the last writer (the greatest
# (stamp, region) of every region's acklog) wrote; @nodes are all regions.
sub lww_check
{
	my ($what, @nodes) = @_;
	my (%win, $logged);

	for my $n (@nodes)
	{
		for my $row (split /\n/, $n->safe_psql('postgres', q{SELECT k, w, stamp, region, deleted FROM acklog}))
		{
			my ($k, $w, $stamp, $region, $deleted) = split /\|/, $row;
			$logged++;
			my $cur = $win{$k};
			$win{$k} = { w => $w, stamp => $stamp, region => $region, deleted => $deleted eq 't', stamped => "$stamp $region $deleted" }
			  if !$cur || $stamp > $cur->{stamp} || ($stamp == $cur->{stamp} && $region gt $cur->{region});
		}
	}
	ok($logged, "$what: the writers made writes ($logged logged item changes over " . scalar(keys %win) . ' keys)');
	my %expect = map { $_ => $win{$_}{w} } grep { !$win{$_}{deleted} } keys %win;
	for my $n (@nodes)
	{
		my %have = map { split /\|/ } split /\n/, $n->safe_psql('postgres',
			q{SELECT i->'pk'->>'S', coalesce(i->'w'->>'S', '?') FROM dynindex.read_all('Scan', '{"TableName":"Glob","ConsistentRead":true}') i});
		my @wrong = grep { ($have{$_} // '') ne ($expect{$_} // '') } sort(keys %have, keys %expect);
		my %seen;
		@wrong = grep { !$seen{$_}++ } @wrong;
		is(scalar(@wrong), 0, "$what: " . $n->name . ' holds the last write of every key (' . scalar(keys %expect) . ' items)')
		  or diag(join("\n", map { "$_: has " . ($have{$_} // 'none') . ', last write ' . ($expect{$_} // 'a delete')
			  . ($win{$_} ? " (stamp $win{$_}{stamp} $win{$_}{region})" : '') } @wrong[0 .. ($#wrong < 9 ? $#wrong : 9)]));

		# and the stamp it keeps for each key is that write's: an item of one write under
		# the stamp of another would decide the next changes wrongly
		my %stamp = map { my ($k, @v) = split /\|/; ($k => "@v") } split /\n/, $n->safe_psql('postgres', qq{
			SELECT k, stamp, region, deleted FROM key_stamps(ARRAY(SELECT generate_series(1, $KEYS)))});
		my @off = grep { ($stamp{$_} // 'none') ne $win{$_}{stamped} } sort keys %win;
		is(scalar(@off), 0, "$what: " . $n->name . ' keeps the last write\'s stamp of every key')
		  or diag(join("\n", map { "$_: stamp " . ($stamp{$_} // 'none') . ", last write $win{$_}{stamped}" } @off[0 .. ($#off < 9 ? $#off : 9)]));
	}
	return;
}

1;
