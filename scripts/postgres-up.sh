#!/usr/bin/env bash
# Starts a local PostgreSQL for the test suite and the benchmarks, and makes
# the role they use: postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres
# Debian/Ubuntu, run as root (CI) or with sudo. Safe to run again.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "PostgreSQL is not installed; installing it from Debian's packages" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

version=$(pg_lsclusters --no-header | awk 'NR==1 {print $1}')
cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $2}')
if [ -z "$version" ]; then
  version=$(ls /usr/lib/postgresql | sort -n | tail -1)
  cluster=main
  as_root pg_createcluster "$version" "$cluster" >/dev/null
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
fi
for _ in $(seq 1 50); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 0.2
done
pg_isready -h 127.0.0.1 -p 5432 >/dev/null

as_root su postgres -c "psql -q -v ON_ERROR_STOP=1" <<'SQL'
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sessionstore') THEN
    CREATE ROLE sessionstore LOGIN CREATEDB PASSWORD 'sessionstore';
  END IF;
END $$;
SET client_min_messages = warning;
-- The live-tail tests terminate the LISTEN backend of the server under test.
GRANT pg_signal_backend TO sessionstore;
SQL
echo "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres"
