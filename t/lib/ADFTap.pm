package ADFTap;
# One TAP stream out of several sources (test files, commands, automake
# result files): every result renumbered into this stream and named after
# its source, so that automake's TAP driver counts each assertion.  What
# makes a source's count untrustworthy is a failed result of its own: no
# plan, a plan it did not keep, "1..0" (nothing ran), a bail-out, a
# non-zero exit that no failed result explains.  A source that did not run
# therefore never passes.
#
# t/TEST merges the t/*.t files; scripts/tap.sh calls cli() to merge
# commands into a shell script's stream.
use strict;
use warnings;
use TAP::Parser;

sub new {
    my ($class, %o) = @_;
    return bless { n => $o{n} // 0, failed => $o{failed} // 0,
                   out => $o{out} // \*STDOUT }, $class;
}

sub count  { $_[0]{n} }
sub failed { $_[0]{failed} }

# One result; DIRECTIVE is "TODO why" or "SKIP why", kept for automake.
sub result {
    my ($self, $ok, $desc, $directive) = @_;
    $self->{n}++;
    $desc =~ s/\s*\n\s*/ /g;
    $desc =~ s/#/\\#/g;
    my $line = ($ok ? 'ok' : 'not ok') . " $self->{n} - $desc";
    $line .= " # $directive" if defined $directive;
    print { $self->{out} } "$line\n";
    $self->{failed}++ unless $ok || ($directive // '') =~ /^TODO/i;
    return $ok;
}

sub comment {
    my ($self, @text) = @_;
    print { $self->{out} } map { "# $_\n" } map { split /\n/ } @text;
}

sub plan {
    my ($self) = @_;
    print { $self->{out} } "1..$self->{n}\n";
}

# Merge one source, named NAME; SPEC is TAP::Parser's (exec => [...],
# source => FILE, tap => TEXT).  A source's own test numbers are kept in
# the descriptions of a test file's results (Test.pm reports failures by
# number), not of streams merged already.  Returns its failures.
sub merge {
    my ($self, $name, %spec) = @_;
    my $numbers = delete $spec{numbers};
    my $before = $self->{failed};
    my $p = TAP::Parser->new(\%spec);
    # Test.pm (Apache::Test) names a result only in the "# testing : ..."
    # comment t_cmp prints before it.
    my $testing = '';
    while (my $r = $p->next) {
        if ($r->is_test) {
            (my $desc = $r->description) =~ s/^-\s*//;
            $desc = $testing if $desc eq '';
            my $dir = $r->directive
                    ? $r->directive . ' ' . ($r->explanation // '') : undef;
            my $id = $numbers ? "$name " . $r->number : $name;
            $self->result($r->is_actual_ok,
                          $desc ne '' ? "$id: $desc" : $id, $dir);
            $testing = '';
        }
        elsif ($r->is_comment) {
            $testing = $1 if $r->comment =~ /^testing\s*:\s*(.*\S)/;
            print { $self->{out} } $r->as_string, "\n";
        }
        elsif ($r->is_bailout) {
            $self->result(0, "$name: bailed out: " . ($r->explanation // ''));
        }
        elsif (!$r->is_plan && !$r->is_version) {
            $self->comment($r->as_string) if $r->as_string =~ /\S/;
        }
    }
    if (defined $p->skip_all) {
        $self->result(0, "$name: no test ran (1..0 " . $p->skip_all . ')');
    }
    $self->result(0, "$name: $_") for $p->parse_errors;
    if (($p->wait // 0) != 0 && $self->{failed} == $before) {
        $self->result(0, "$name: exited with status " . ($p->exit // '?')
                      . ($p->wait & 127 ? ' (signal ' . ($p->wait & 127) . ')'
                                        : ''));
    }
    return $self->{failed} - $before;
}

# The results automake's TAP driver recorded for one test (TEST.trs),
# described as in its TEST.log ("PASS: TEST 3 - what").
sub merge_trs {
    my ($self, $name, $trs) = @_;
    (my $log = $trs) =~ s/\.trs$/.log/;
    my (@res, @desc);
    if (open my $fh, '<', $trs) {
        @res = map { /^:test-result: (\S+)/ ? $1 : () } <$fh>;
    }
    if (open my $fh, '<', $log) {
        @desc = map { /^(?:PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): \S+ ?(.*)$/ ? $1 : () }
                <$fh>;
    }
    @res or return $self->result(0, "$name: no result recorded in $trs");
    for my $i (0 .. $#res) {
        my $d = $desc[$i] // '';
        $d =~ s/^\d+ //;
        $d =~ s/^- //;
        $self->result($res[$i] eq 'PASS' || $res[$i] eq 'XFAIL',
                      $d ne '' ? "$name: $d" : $name,
                      $res[$i] eq 'SKIP' ? 'SKIP' : $res[$i] eq 'XFAIL'
                      ? 'TODO' : undef);
    }
    if (@desc != @res) {
        $self->result(0, "$name: $log and $trs disagree");
    }
    # what went wrong, as automake's test-suite.log would show it
    if (grep { $_ ne 'PASS' } @res and open my $fh, '<', $log) {
        $self->comment("$log:", map { chomp; $_ } <$fh>);
    }
}

# scripts/tap.sh: STATE holds "count failed" between calls.
#   run STATE NAME COMMAND...          merge the command's TAP
#   trs STATE NAME STATUS FILE.trs...  merge automake's results; STATUS is
#                                      make's exit status
sub cli {
    my ($what, $state, $name, @args) = @_;
    my ($n, $failed) = (0, 0);
    if (open my $fh, '<', $state) {
        ($n, $failed) = split ' ', scalar(<$fh>) // '0 0';
    }
    $| = 1;
    my $tap = ADFTap->new(n => $n, failed => $failed);
    if ($what eq 'run') {
        $tap->merge($name, exec => \@args);
    }
    else {
        my $status = shift @args;
        my $before = $tap->failed;
        @args or $tap->result(0, "$name: no automake result file");
        for my $trs (@args) {
            (my $test = $trs) =~ s/\.trs$//;
            $tap->merge_trs("$name $test", $trs);
        }
        if ($status != 0 && $tap->failed == $before) {
            $tap->result(0, "$name: make exited with status $status");
        }
    }
    open my $fh, '>', $state or die "$state: $!";
    print $fh $tap->count, ' ', $tap->failed, "\n";
    close $fh or die "$state: $!";
    return 0;
}

1;
