#!/usr/bin/perl
# fabcheck TEST SHIM — not perftest. This kernel has no RDMA, so lab tests put this program on a
# node's PATH as `ib_write_bw`. It behaves like the real tool at the process level: without a
# host argument it is the server (listens on -p PORT, default 18515, waits for one client);
# with one it is the client (connects to HOST:PORT). Each side then prints a REAL captured
# perftest output from tests/fixtures (paths substituted by the test: @SERVER@ / @CLIENT@).
use strict;
use warnings;
use IO::Socket::INET;
my ($port, $host) = (18515, undef);
for (my $i = 0; $i < @ARGV; $i++) {
    my $a = $ARGV[$i];
    if ($a eq '-p') { $port = $ARGV[++$i]; next; }
    if ($a =~ /^-(d|x|s|D|q|m|n)$/) { $i++; next; }
    next if $a =~ /^-/;
    $host = $a;
}
sub cat_file { my ($p) = @_; open(my $f, '<', $p) or die "shim: $p: $!\n"; local $| = 1; print while <$f>; }
if (!defined $host) {
    my $s = IO::Socket::INET->new(LocalPort => $port, Listen => 1, ReuseAddr => 1) or die "shim: bind $port: $!\n";
    my $c = $s->accept or die "shim: accept: $!\n";
    my $hello = <$c>;
    print $c "server-ok\n";
    close $c;
    cat_file('@SERVER@');
    exit 0;
}
my $c;
for (1 .. 50) { $c = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port) and last; select(undef, undef, undef, 0.1); }
unless ($c) { print STDERR " Couldn't connect to $host:$port\n"; exit 1; }
print $c "client-hello\n";
my $ok = <$c>;
cat_file('@CLIENT@');
exit 0;
