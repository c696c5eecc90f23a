# The Prometheus exposition (?metrics on the status handler): parsed by
# the reference client's parser (python3-prometheus-client), every family
# typed and documented, names by the conventions, the same figures as the
# JSON, and values that move with traffic and with the load signal.
# Configuration: extra.conf.in (/adf-status).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Temp qw(tempfile);
use JSON::PP ();
use ADFTest;

my %counters = map { $_ => 1 } qw(
    responses compressed_responses input_bytes output_bytes level_responses
    sibling_responses egress_bytes stale_siblings load_samples cache_hits
    cache_misses cache_evictions cache_written cache_corrupt dictionary_hits
    dictionary_misses dictionary_saved_bytes);
my %gauges = map { $_ => 1 } qw(
    info start_time_seconds load_interval_seconds cpu_target_ratio
    cpu_limit_off_ratio cpu_limit_on_ratio load_ratio load_smoothed_ratio
    load_age_seconds load_stale load_error server_cpu_ratio
    compression_cpu_ratio limited effort_ratio slow_share_ratio
    budget_cpu_seconds_per_byte
    budget_max_cpu_seconds_per_byte level model_cost_scale
    model_cpu_seconds_per_byte model_output_ratio model_frontier
    cache_entries cache_bytes cache_max_bytes cache_writable
    cache_queue_length cache_idle);

plan tests => 5 + 2 * (keys(%counters) + keys(%gauges)) + 5 + 8 + 11 + 7;

my $root = docroot();
my $python = '/usr/bin/python3';    # Debian's, with prometheus_client

# The families as the reference parser sees them: name => family.
sub parse {
    my ($text) = @_;
    my ($fh, $file) = tempfile(UNLINK => 1);
    print $fh $text;
    close $fh;
    my $out = `$python t/lib/prom_parse.py < '$file'`;
    die "prometheus_client could not parse the exposition\n" if $?;
    return JSON::PP::decode_json($out);
}

sub metrics {
    my $r = fetch('/adf-status?metrics');
    die 'metrics: ' . $r->code unless $r->code == 200;
    my %f;
    for my $fam (@{ parse($r->content) }) {
        (my $n = $fam->{name}) =~ s/^adaptive_deflate_//;
        die "family $n twice (samples not together)\n" if $f{$n};
        $f{$n} = $fam;
    }
    return \%f;
}

# The value of one sample: family, then labels.
sub value {
    my ($m, $fam, %labels) = @_;
    for my $s (@{ $m->{$fam}{samples} || [] }) {
        next if grep { ($s->[1]{$_} // '') ne $labels{$_} } keys %labels;
        next if keys %{ $s->[1] } != keys %labels;
        return $s->[2];
    }
    return undef;
}

# ---- the format --------------------------------------------------------------
my $r = fetch('/adf-status?metrics');
ok t_cmp($r->header('Content-Type'),
         qr{^text/plain; version=0\.0\.4; charset=utf-8$}, 'content type');
ok t_cmp($r->header('Cache-Control'), 'no-store', 'not cached');
# What Prometheus asks for with params: { metrics: [""] }.
ok t_cmp(fetch('/adf-status?metrics=')->header('Content-Type'),
         qr{^text/plain; version=0\.0\.4}, '?metrics= too');
# Every line: HELP, then TYPE, then the family's samples.
my ($bad, $fam) = (0, '');
for (split /\n/, $r->content) {
    if (/^# HELP (adaptive_deflate_[a-z_]+) \S/) { $fam = $1; next }
    if (/^# TYPE ([a-z_]+) (counter|gauge)$/) { $bad++ if $1 ne $fam; next }
    if (/^([a-z_]+)(?:\{[a-z_]+="(?:[^"\\]|\\.)*"(?:,[a-z_]+="(?:[^"\\]|\\.)*")*\})? -?[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?$/) {
        $bad++ if $1 ne $fam;
        next;
    }
    $bad++;
    t_debug("bad line: $_");
}
ok t_cmp($bad, 0, 'every line is HELP, TYPE or a sample of that family');
my $m0 = metrics();
ok t_cmp(scalar(keys %$m0), keys(%counters) + keys(%gauges),
         'no family beyond the documented ones');
for my $n (sort keys %counters) {
    ok t_cmp($m0->{$n}{type} // 'missing', 'counter', "$n is a counter");
    my @s = @{ $m0->{$n}{samples} || [] };
    ok @s && !grep { $_->[0] ne "adaptive_deflate_${n}_total" } @s;
}
for my $n (sort keys %gauges) {
    ok t_cmp($m0->{$n}{type} // 'missing', 'gauge', "$n is a gauge");
    ok length($m0->{$n}{help} // '') > 10;
}

# Labels: one series per label set, the reasons and codings of the JSON.
my $j0 = status_json();
my %dup;
my $dups = grep { $dup{ $_->[0] . JSON::PP->new->canonical->encode($_->[1]) }++ }
    map { @{ $_->{samples} } } values %$m0;
ok t_cmp($dups, 0, 'no series twice');
ok t_cmp(join(',', sort map { $_->[1]{reason} } @{ $m0->{responses}{samples} }),
         join(',', sort keys %{ $j0->{reasons} }), 'a series per reason');
ok t_cmp(join(',', sort map { $_->[1]{coding} }
                  @{ $m0->{compressed_responses}{samples} }),
         join(',', sort keys %{ $j0->{compressed} }), 'a series per coding');
# The load file's name holds a quote and a backslash: escaped, and read
# back by the parser as the JSON has it.
ok t_cmp(value($m0, 'info', version => $j0->{version},
               source => $j0->{load}{source}), 1, 'info, labels escaped');
ok t_cmp(value($m0, 'cpu_target_ratio'), 0.5, 'target as a ratio');

# ---- the same figures as the JSON ------------------------------------------
# Taken one after the other: the metrics request itself is counted in
# between (after its snapshot), as one response not accepting a coding.
my $m1 = metrics();
my $j1 = status_json();
ok t_cmp(value($m1, 'compressed_responses', coding => 'gzip'),
         $j1->{compressed}{gzip}, 'compressed');
ok t_cmp(value($m1, 'input_bytes', coding => 'gzip'), $j1->{bytes_in}{gzip},
         'bytes in');
# (every coding this build has; br where it has brotli)
my $c2 = if_built('br', 'gzip');
ok t_cmp(value($m1, 'output_bytes', coding => $c2), $j1->{bytes_out}{$c2},
         'bytes out');
ok t_cmp(value($m1, 'sibling_responses', coding => $c2), $j1->{siblings}{$c2},
         'siblings');
ok t_cmp(value($m1, 'responses', reason => 'max'), $j1->{reasons}{max},
         'a reason');
my $sum = 0;
$sum += $_->[2] for @{ $m1->{responses}{samples} };
ok t_cmp($sum + 1, $j1->{responses}, 'the reasons add up to the responses');
ok t_cmp(value($m1, 'level_responses', coding => 'gzip', level => 9),
         $j1->{levels}{gzip}{9} // 0, 'a level');
ok t_cmp(value($m1, 'load_samples') <= $j1->{load}{samples}, 1, 'samples');

# ---- values move with traffic ----------------------------------------------
idle();
mkdir "$root/static";
spew("$root/static/metrics.html", slurp("$root/index.html"));
make_sibling("$root/static/metrics.html", $c2);
my $len = length slurp("$root/index.html");
my $ja = status_json();
my $a = metrics();
fetch('/index.html', 'Accept-Encoding' => 'gzip') for 1 .. 3;
fetch('/index.html', 'Accept-Encoding' => 'br') for 1 .. 2;
fetch('/corpus/photo.jpeg', 'Accept-Encoding' => 'gzip');
fetch('/static/metrics.html', 'Accept-Encoding' => $c2);
my $b = metrics();
my $jb = status_json();
sub delta { my ($f, %l) = @_; value($b, $f, %l) - value($a, $f, %l) }
ok t_cmp(delta('compressed_responses', coding => 'gzip'), 3, 'gzip +3');
# without brotli the br clients get the page as it is
ok t_cmp(built('br') ? delta('compressed_responses', coding => 'br')
                     : value($b, 'compressed_responses', coding => 'br')
                       // 'no series', built('br') ? 2 : 'no series', 'br +2');
ok t_cmp(delta('input_bytes', coding => 'gzip'), 3 * $len, 'bytes in');
ok delta('output_bytes', coding => 'gzip') > 0;
ok delta('output_bytes', coding => 'gzip') < 3 * $len;
# Idle, they go out at level 9; under valgrind compression is so slow that
# the controller may take a rung down between them: the counter must say
# what the status page says, level by level.
my $lv = 0;
for my $l (1 .. 9) {
    my $d = delta('level_responses', coding => 'gzip', level => $l);
    $lv += $d;
    my $jd = ($jb->{levels}{gzip}{$l} // 0) - ($ja->{levels}{gzip}{$l} // 0);
    $lv = -1e9 if $d != $jd;
}
ok t_cmp($lv, 3, 'the three gzip responses by level, as the status page has them');
ok t_cmp(delta('sibling_responses', coding => $c2), 1, 'sibling');
ok t_cmp(delta('responses', reason => 'type'), 1, 'the JPEG');
ok t_cmp(delta('responses', reason => 'not-accepted'), built('br') ? 1 : 3,
         'the first metrics request (and the br clients without brotli)');
ok delta('egress_bytes') > 3 * 100;
ok t_cmp(value($b, 'start_time_seconds'), value($a, 'start_time_seconds'),
         'start time holds');

# ---- the load signal -------------------------------------------------------
my $m;
set_load(99);
ok wait_for(sub { $m = metrics(); value($m, 'limited') == 1 }, 10);   # tripped
ok t_cmp(value($m, 'load_ratio'), 0.99, 'load as a ratio');
set_load(5);
ok wait_for(sub { $m = metrics(); value($m, 'limited') == 0
                  && value($m, 'effort_ratio') == 1 }, 10);   # released
ok value($m, 'load_age_seconds') < 1;
# No signal: the source cannot be read, and after two intervals it is stale.
unlink load_file();
ok wait_for(sub { $m = metrics(); value($m, 'load_error') == 1
                  && value($m, 'load_stale') == 1 }, 10);   # stale
ok value($m, 'load_age_seconds') >= 0.2;
idle();
ok t_cmp(value(metrics(), 'load_stale'), 0, 'fresh again');
