#!/usr/bin/env perl
# A harness in Perl speaking contextos-lab.harness/1, written from the README alone (a language
# the kit has no code for). PERL_H_MODE=die|badjson makes it fail; `--persistent` reads one
# request per line and closes each with {"batch_done": n}.
use strict; use warnings; use JSON::PP;
$| = 1;
my $json = JSON::PP->new->canonical;
my $persistent = grep { $_ eq '--persistent' } @ARGV;
if (grep { $_ eq '--surfaces' } @ARGV) {
  print $json->encode({version => "p1", max_concurrency => 4,
    persistent => ($persistent ? JSON::PP::true : JSON::PP::false),
    surfaces => [{name => "care", layer => "prompt", kind => "int", low => 0, high => 4,
                  step => 1, baseline => 1, change_class => "additive"}]}), "\n";
  exit 0;
}
my $mode = $ENV{PERL_H_MODE} // "ok";
sub answer {
  my ($req) = @_;
  for my $c (@{ $req->{cases} }) {
    die "no model configured for $c->{case_id}" if $mode eq "die";
    if ($mode eq "badjson") { print "{not json\n"; next; }
    my ($a, $b, $op) = ($c->{a}, $c->{b}, $c->{op});
    my $right = $op eq '+' ? $a + $b : $op eq '-' ? $a - $b : $a * $b;
    print $json->encode({case_id => $c->{case_id}, decision => "$right",
      output_text => "$right", tokens => 10, tokens_out => 2, latency_ms => 5,
      cost_usd => 0.001 * (1 + $req->{config}{care}),
      seen => join(",", sort keys %$c)}), "\n";
  }
}
if ($persistent) {
  while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $req = $json->decode($line);
    answer($req);
    print $json->encode({batch_done => $req->{batch}}), "\n";
  }
  exit 0;
}
local $/;
answer($json->decode(<STDIN>));
