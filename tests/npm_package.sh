#!/bin/sh
# Makes sure PACKAGE@VERSION from npm is installed under PREFIX (npm install --prefix, once;
# later runs and the npm cache reuse it), for the tests that run a public reference
# implementation from npm (the API SDKs, the reference MCP server).
# Exits 0 when it is there, 77 (ctest SKIP_RETURN_CODE) with the reason only when node/npm
# are missing or too old or the npm registry cannot be reached, 1 when the install fails.
# Several tests may start together: one installs, the others wait on PREFIX/.lock.
# usage: npm_package.sh PREFIX PACKAGE VERSION
set -u
prefix=$1 package=$2 version=$3

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "SKIP: this test needs node and npm to run $package (Debian: apt-get install nodejs npm)"
    exit 77
fi
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
    echo "SKIP: node $(node --version) is too old for $package@$version (node 18 or later)"
    exit 77
fi

have() { node -p "require('$prefix/node_modules/$package/package.json').version" 2>/dev/null; }
mkdir -p "$prefix"
(
    flock 9
    [ "$(have)" = "$version" ] && exit 0
    echo "installing $package@$version into $prefix"
    npm install --prefix "$prefix" "$package@$version" --no-audit --no-fund --prefer-offline \
        --fetch-timeout=30000 --fetch-retries=1 >"$prefix/npm-install.log" 2>&1 && exit 0
    if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|network|proxy' \
            "$prefix/npm-install.log"; then
        echo "SKIP: the npm registry cannot be reached to install $package@$version:"
        tail -n 5 "$prefix/npm-install.log"
        exit 77
    fi
    echo "npm install $package@$version failed:"
    cat "$prefix/npm-install.log"
    exit 1
) 9>"$prefix/.lock"
