#!/usr/bin/perl
# Writes a MaxMind DB in the GeoIP2-City layout for the tests and tools/bench, with Debian's
# libmaxmind-db-writer-perl. Usage: make_mmdb.pl OUT.mmdb < networks
# Each input line: PREFIX CONTINENT COUNTRY SUBDIVISION ASN LAT LON ("-" for an absent field).
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my %types = (
    continent => 'map', country => 'map', subdivisions => ['array', 'map'], location => 'map',
    code => 'utf8_string', iso_code => 'utf8_string', latitude => 'double', longitude => 'double',
    autonomous_system_number => 'uint32',
);
my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version => 6, record_size => 28, database_type => 'gslbd-test-City',
    languages => ['en'], description => { en => 'gslbd test data' },
    map_key_type_callback => sub { $types{ $_[0] } },
    remove_reserved_networks => 0, alias_ipv6_to_ipv4 => 0,
);
while (my $line = <STDIN>) {
    chomp $line;
    next if $line =~ /^\s*(#|$)/;
    my ($net, $cont, $country, $sub, $asn, $lat, $lon) = split ' ', $line;
    my %rec;
    $rec{continent} = { code => $cont } if $cont ne '-';
    $rec{country} = { iso_code => $country } if $country ne '-';
    $rec{subdivisions} = [ { iso_code => $sub } ] if $sub ne '-';
    $rec{autonomous_system_number} = $asn + 0 if $asn ne '-';
    $rec{location} = { latitude => $lat + 0.0, longitude => $lon + 0.0 } if $lat ne '-';
    $tree->insert_network($net, \%rec);
}
open my $fh, '>:raw', $ARGV[0] or die "$ARGV[0]: $!";
$tree->write_tree($fh);
close $fh or die;
