#!/bin/sh
# The official `openai` npm client against `waste serve` (openai_conformance.mjs).
# Installs the pinned client into the build tree once (npm install --prefix, reused by
# later runs and by the npm cache); exits 77 (ctest SKIP_RETURN_CODE) with the reason only
# when node/npm are missing or too old, or the npm registry cannot be reached.
# usage: openai_client.sh PREFIX VERSION WASTE_CLI MODEL_DIR
set -u
prefix=$1 version=$2 cli=$3 model=$4
here=$(dirname "$0")

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "SKIP: the openai client test needs node and npm (Debian: apt-get install nodejs npm)"
    exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    echo "SKIP: node $(node --version) is too old for openai@$version (node 18 or later)"
    exit 77
fi

have() { node -p "require('$prefix/node_modules/openai/package.json').version" 2>/dev/null; }
mkdir -p "$prefix"
(
    flock 9 # the r3 and K3 runs may start together: one installs, the other waits
    if [ "$(have)" != "$version" ]; then
        echo "installing openai@$version into $prefix"
        if ! npm install --prefix "$prefix" "openai@$version" --no-audit --no-fund --prefer-offline \
                --fetch-timeout=30000 --fetch-retries=1 >"$prefix/npm-install.log" 2>&1; then
            if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|network|proxy' \
                    "$prefix/npm-install.log"; then
                echo "SKIP: the npm registry cannot be reached to install openai@$version:"
                tail -n 5 "$prefix/npm-install.log"
                exit 77
            fi
            echo "npm install openai@$version failed:"
            cat "$prefix/npm-install.log"
            exit 1
        fi
    fi
) 9>"$prefix/.lock"
status=$?
[ $status -ne 0 ] && exit $status

exec node "$here/openai_conformance.mjs" "$prefix" "$cli" "$model"
