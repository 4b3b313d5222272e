# Sourced by postgres.sh and peers.sh, from the repository root: starts a PostgreSQL cluster of their own in a
# temporary directory (as `nobody` when run as root, since PostgreSQL refuses root; default settings, fsync on) with
# a database `bench` of user `bench` on a free loopback port, and stops and removes it on exit. Leaves $bin (the
# server's programs), $root and $port. Needs Debian's postgresql.
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -n "$bin" ] || { echo "needs PostgreSQL: apt-get install postgresql" >&2; exit 1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
root="$(mktemp -d)"
chmod 777 "$root"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
(cd /tmp && as_postgres "$bin/initdb" -D "$root/pg" -U bench -A trust >/dev/null)
(cd /tmp && as_postgres "$bin/pg_ctl" -D "$root/pg" -l "$root/pg.log" -w \
    -o "-p $port -k $root -c listen_addresses=127.0.0.1" start >/dev/null)
trap '(cd /tmp && as_postgres "$bin/pg_ctl" -D "$root/pg" -m immediate -w stop >/dev/null); rm -rf "$root"' EXIT
(cd /tmp && as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U bench bench)
