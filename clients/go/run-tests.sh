#!/usr/bin/env bash
# The Go client's checks: gofmt, go vet, and go test against the real server
# (started by the tests from this checkout on a fresh PostgreSQL database).
#
#   clients/go/run-tests.sh          install the protoc plugins if needed, then check and test
#   clients/go/run-tests.sh plugins  only install the pinned protoc plugins (before `npx buf generate`)
#
# Needs Go, `npm ci` done in the repository root, and PostgreSQL (started with
# scripts/postgres-up.sh when nothing answers on 127.0.0.1:5432 and
# SESSIONSTORE_TEST_DATABASE_URL is unset).
set -euo pipefail

# gen/go is only reproducible with these exact generators: CI regenerates it
# and fails on any diff. Bump them here and regenerate together.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

install_plugin() {
  local name=$1 pkg=$2 want=$3 have
  have=$("$name" --version 2>/dev/null | awk '{print $2}' || true)
  if [ "v${have#v}" = "$want" ]; then
    return
  fi
  echo "installing $name $want (found: ${have:-none})" >&2
  go install "$pkg@$want"
  have=$("$name" --version 2>/dev/null | awk '{print $2}' || true)
  if [ "v${have#v}" != "$want" ]; then
    local gobin
    gobin=$(go env GOBIN)
    echo "$name $want was installed into ${gobin:-$(go env GOPATH)/bin}, but the one on PATH is '${have:-none}': put that directory first on PATH" >&2
    exit 1
  fi
}

install_plugin protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
install_plugin protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"

case "${1:-}" in
  plugins) exit 0 ;;
  "") ;;
  *) echo "usage: $0 [plugins]" >&2; exit 2 ;;
esac

if [ ! -x "$root/node_modules/.bin/tsx" ]; then
  echo "node_modules/.bin/tsx is missing: run 'npm ci' in $root first (the tests start the real server)" >&2
  exit 1
fi
if [ -z "${SESSIONSTORE_TEST_DATABASE_URL:-}" ] && ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  "$root/scripts/postgres-up.sh" >/dev/null
fi

cd "$here"
unformatted=$(gofmt -l . "$root/gen/go")
if [ -n "$unformatted" ]; then
  echo "not gofmt-clean (run gofmt -w):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# -count=1: the tests exercise a server go test cannot see, so a cached pass
# would hide a server change.
go test -count=1 ./...
