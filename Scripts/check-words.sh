#!/usr/bin/env bash
# Fails when a word the glossary retired (MosaicKernel.docc/Architecture.md, "Words") is back in Sources, the
# articles, the README or the example app, and says which word to use. Scripts/words/rename.sh renames them all.
set -euo pipefail
cd "$(dirname "$0")/.."

# retired (a Perl regex) => the word to use
retired='
\bSharedStorage\b => ExternalStorage
\bsharedStorage\b => externalStorage
\b[Ss]hared storage\b => external storage
\bstorage instances share\b => external storage
\bshared[ -]storage[ -]unavailable\b => storageUnavailable (storage-unavailable)
\bSharedPolicy\w* => PolicyStore, StoredPolicy…
\b(read|refresh|watch|retry)SharedPolicy => …StoredPolicy
\bshared[ -]policy\b => stored policy
\bSharedStatePersister\b => TransactionalStateStore
\bStatePersister\b => SavedStateStore
\b[Pp]ersisters?\b => store
\bShared(StateChange|Save|Row|Commit|Watch)\b => StoredStateChange, StateSave, StateRow, StateCommit, StoreWatch
\bStateStore\b => StateAccess (in memory: the hub) or a store of storage
\bMemoryDurableStore\b => MemoryEventStore
\b(Contribution|Configuration)Store\b => ContributionHub, ConfigurationHub
\b(contribution|configuration)Store\b => contributionHub, configurationHub
\bqueryTimeout\b => queryTimeLimit
\bidleTimeout\b(?!: TimeAmount) => idleTimeLimit (Hummingbird'"'"'s own parameter keeps idleTimeout)
\b\w*BusyTimeout\b => …BusyTimeLimit
\bbusyTimeout\b => busyTimeLimit
\b(query|idle|busy) timeout\b => time limit
--idle-timeout\b => --idle-time-limit
'

files=$(git ls-files -- Sources README.md Examples | grep -E '\.(swift|md|h|c)$')
# shellcheck disable=SC2086
RETIRED="$retired" perl -e '
    my @rules = map { [split / => /, $_, 2] } grep { length } split /\n/, $ENV{RETIRED};
    my $status = 0;
    for my $file (@ARGV) {
        open my $in, "<", $file or die "$file: $!";
        # The glossary names the retired words: its section is the one place they stay.
        my $skip = 0;
        while (<$in>) {
            if (/^## Words$/) { $skip = 1 } elsif (/^## /) { $skip = 0 }
            next if $skip;
            for my $rule (@rules) {
                next unless /$rule->[0]/;
                print STDERR "$file:$.: a retired word (/$rule->[0]/): use $rule->[1]\n    $_";
                $status = 1;
            }
        }
    }
    exit $status;
' $files
