#!/usr/bin/env bash
# Renames the words issue 62 retired to the ones the Architecture article's glossary keeps, in every tracked text
# file, and moves the files named after them. Word-bounded and free of swaps (no new name is an old one), so running
# it again, or on a branch begun before the rename, changes only what still uses an old word.
set -euo pipefail
cd "$(dirname "$0")/../.."

move() { if [ -e "$1" ]; then git mv "$1" "$2"; fi; }
move Sources/MosaicKernel/Instances/SharedStorage.swift Sources/MosaicKernel/Instances/ExternalStorage.swift
move Sources/MosaicKernel/Instances/Kernel+SharedPolicy.swift Sources/MosaicKernel/Instances/Kernel+StoredPolicy.swift
move Sources/MosaicKernel/State/StatePersister.swift Sources/MosaicKernel/State/SavedStateStore.swift
move Sources/MosaicKernel/Events/MemoryDurableStore.swift Sources/MosaicKernel/Events/MemoryEventStore.swift
move Sources/MosaicKernel/Contributions/ContributionStore.swift Sources/MosaicKernel/Contributions/ContributionHub.swift
move Sources/MosaicKernel/Configuration/ConfigurationStore.swift Sources/MosaicKernel/Configuration/ConfigurationHub.swift
move Tests/MosaicKernelTests/SharedStorageTests.swift Tests/MosaicKernelTests/ExternalStorageTests.swift
move Tests/MosaicKernelTests/SharedPolicyTests.swift Tests/MosaicKernelTests/StoredPolicyTests.swift
move Sources/MosaicKernel/State/StateHub+Sharing.swift Sources/MosaicKernel/State/StateHub+Watching.swift

git ls-files -z -- Sources Tests Examples Benchmarks Fuzz Scripts README.md \
    ':!Scripts/words' ':!Scripts/check-words.sh' ':!Benchmarks/HISTORY.md' ':!*.png' ':!*.jpg' ':!*.sqlite' |
    xargs -0 grep -lIZ -E 'Shared|shared|Persister|persister|StateStore|DurableStore|ContributionStore|ConfigurationStore|contributionStore|configurationStore|[Tt]imeout|instances share' 2>/dev/null |
    xargs -0 -r perl -pi -e '
        # The glossary (the Architecture article'"'"'s "Words" section) names the retired words: leave it.
        if ($ARGV ne $file) { $file = $ARGV; $skip = 0 }
        if (/^## Words$/) { $skip = 1 } elsif (/^## /) { $skip = 0 }
        next if $skip;
        # Storage several instances use (PostgreSQL) is external storage; "shared" is only state modules share.
        s/\bSharedStorage(Tests)?\b/ExternalStorage$1/g;
        s/\bsharedStorageUnavailable\b/storageUnavailable/g;
        s/\bshared-storage-unavailable\b/storage-unavailable/g;
        s/\bsharedStorage\b/externalStorage/g;
        s/\b([Ss])hared storage\b/$1 eq "S" ? "External storage" : "external storage"/ge;
        # A part of storage that keeps one kind of data is a store; the in-memory holders are hubs.
        s/\bSharedStatePersister\b/TransactionalStateStore/g;
        s/\bStatePersister\b/SavedStateStore/g;
        s/\bHeldPersister\b/HeldStateStore/g;
        s/\bpersister\b/store/g;
        s/\bpersisters\b/stores/g;
        s/\bSharedPolicyStore\b/PolicyStore/g;
        s/\bSharedPolicy(\w*)\b/StoredPolicy$1/g;
        s/\b(read|refresh|watch|retry)SharedPolicy(\w*)\b/$1StoredPolicy$2/g;
        s/\bsharedPolicy(\w*)\b/storedPolicy$1/g;
        s/\bshared([ -])policy\b/stored$1policy/g;
        s/\bSharedPolicyTests\b/StoredPolicyTests/g;
        s/\bSharedStateChange\b/StoredStateChange/g;
        s/\bSharedSave\b/StateSave/g;
        s/\bSharedRow\b/StateRow/g;
        s/\bSharedCommit\b/StateCommit/g;
        s/\bSharedWatch\b/StoreWatch/g;
        s/\b(Silent|Counting)SharedStore\b/$1StateStore/g;
        s/\bModuleStateStore\b/ModuleStateAccess/g;
        s/\bStateStore\b/StateAccess/g;
        s/\bMemoryDurableStore\b/MemoryEventStore/g;
        s/\b(Weak)?ContributionStore\b/$1ContributionHub/g;
        s/\b(weakC|c)ontributionStore\b/$1ontributionHub/g;
        s/\bConfigurationStore\b/ConfigurationHub/g;
        s/\bconfigurationStore\b/configurationHub/g;
        # Every limit on how long something may take is a time limit.
        s/\bqueryTimeout\b/queryTimeLimit/g;
        s/\bidleTimeout\b/idleTimeLimit/g;
        s/\bstateDatabaseBusyTimeout\b/stateDatabaseBusyTimeLimit/g;
        s/\bbusyTimeout\b/busyTimeLimit/g;
        s/\b(query|idle|busy) timeout\b/$1 time limit/g;
        s/\bstorage instances share\b/external storage/g;
        s/--idle-timeout\b/--idle-time-limit/g;
        # Hummingbird'"'"'s own parameter keeps its name.
        s/\], idleTimeLimit: TimeAmount/], idleTimeout: TimeAmount/g;
    '

# The hub's transactional store (embedded or external) was `shared`; only in the hub and the calls that make one.
git ls-files -z -- 'Sources/MosaicKernel/State/StateHub*.swift' |
    xargs -0 -r perl -pi -e '
        next if m{^\s*//};
        s/\bshared\b/transactional/g;
        s/\b(apply|commit)Shared\b/$1Transactional/g;
        s/\bmaximumSharedAttempts\b/maximumConflictAttempts/g;
    '
git ls-files -z -- Sources Tests Benchmarks/Sources | xargs -0 grep -lZ 'StateHub(\|shared: options' |
    xargs -0 -r perl -pi -e 's/\bStateHub\(shared:/StateHub(transactional:/g; s/^(\s*)shared: options\./$1transactional: options./'
perl -pi -e 's/\bif let shared = options\.externalStorage \{ shared\.events \}/if let external = options.externalStorage { external.events }/' \
    $(git ls-files -- 'Sources/MosaicKernel/*Kernel.swift')

# Longer names push some lines past 120 columns: the formatter wraps them as the lint wants.
swift format -i --recursive --parallel Sources Tests Examples Benchmarks/Sources
