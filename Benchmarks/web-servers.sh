# Sourced by web.sh and web-cpu.sh, from the repository root: builds `ghost` and `bare-server` in release, starts
# Ghost on port 8181 and the bare route on 8182 serving the bytes Ghost's /dashboard answered (the same response body,
# without the application), and stops both on exit. Leaves their pids in $ghost and $bare, the page in
# "$data/dashboard.html".
swift build -c release --product ghost
swift build -c release --package-path Benchmarks --product bare-server
data="$(mktemp -d)"
.build/release/ghost --port 8181 --data-directory "$data" >/dev/null &
ghost=$!
trap 'kill $ghost 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -fs http://127.0.0.1:8181/dashboard -o "$data/dashboard.html" && break; sleep 0.1; done
Benchmarks/.build/release/bare-server 8182 "$data/dashboard.html" &
bare=$!
trap 'kill $ghost $bare 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -fs http://127.0.0.1:8182/dashboard >/dev/null && break; sleep 0.1; done
