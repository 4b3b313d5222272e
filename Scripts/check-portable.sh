#!/usr/bin/env bash
# Mosaic and MosaicKernel are meant for Apple platforms too, which nothing here can build for: fail on the
# Linux-only things a Linux build cannot catch, a C library import without a `canImport` guard and `/proc`.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for file in $(find Sources/Mosaic Sources/MosaicKernel -name '*.swift'); do
    # An `import Glibc` or `import Musl` must sit in a `#if canImport(…)` branch naming that module.
    awk -v file="$file" '
        /^[[:space:]]*#(if|elseif)[[:space:]]/ { condition = $0 }
        /^[[:space:]]*#else/ { condition = "" }
        /^[[:space:]]*#endif/ { condition = "" }
        match($0, /import[[:space:]]+(Glibc|Musl)([^A-Za-z]|$)/) {
            module = substr($0, RSTART, RLENGTH); sub(/import[[:space:]]+/, "", module); sub(/[^A-Za-z]$/, "", module)
            if (index(condition, "canImport(" module ")") == 0) {
                printf "%s:%d: import %s without #if canImport(%s): it does not exist on Apple platforms\n", file, NR, module, module
                failed = 1
            }
        }
        /"\/proc/ { printf "%s:%d: /proc exists on Linux only\n", file, NR; failed = 1 }
        END { exit failed }
    ' "$file" || status=1
done
exit $status
