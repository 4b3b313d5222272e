#!/usr/bin/env bash
# `mosaic new module` makes a package that builds and whose test passes unmodified: generate one in a temporary
# directory against this checkout (by path), lint it with the house rules, then `swift build` and `swift test` in it.
# Also generates a host package and lints it. Slow (the new package builds Mosaic and its dependencies from scratch),
# so it runs in CI, not in `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"

swift build --product mosaic
mosaic="$(swift build --show-bin-path)/mosaic"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$mosaic" new module com.acme.payments --path "$work/payments" --mosaic-path "$checkout"
"$mosaic" new host Shop --path "$work/shop" --mosaic-path "$checkout"
swift format lint --strict --configuration .swift-format --recursive \
    "$work/payments/Package.swift" "$work/payments/Sources" "$work/payments/Tests" \
    "$work/shop/Package.swift" "$work/shop/Sources"

cd "$work/payments"
swift build
swift test
