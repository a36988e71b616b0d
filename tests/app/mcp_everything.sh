#!/bin/sh
# Runs tst_mcp_everything against the reference MCP server from npm,
# @modelcontextprotocol/server-everything, installed into the build tree once (npm install
# --prefix; later runs and the npm cache reuse it). Exits 77 (ctest SKIP_RETURN_CODE) with
# the reason only when node/npm are missing or too old, or the npm registry cannot be reached.
# usage: mcp_everything.sh PREFIX VERSION TEST_BINARY
set -u
prefix=$1 version=$2 binary=$3
package=@modelcontextprotocol/server-everything

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "SKIP: the MCP test needs node and npm to run $package (Debian: apt-get install nodejs npm)"
    exit 77
fi
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
    echo "SKIP: node $(node --version) is too old for $package@$version (node 18 or later)"
    exit 77
fi

installed=$(node -p "require('$prefix/node_modules/$package/package.json').version" 2>/dev/null)
if [ "$installed" != "$version" ]; then
    mkdir -p "$prefix"
    echo "installing $package@$version into $prefix"
    if ! npm install --prefix "$prefix" "$package@$version" --no-audit --no-fund --prefer-offline \
            --fetch-timeout=30000 --fetch-retries=1 >"$prefix/npm-install.log" 2>&1; then
        if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|network|proxy' \
                "$prefix/npm-install.log"; then
            echo "SKIP: the npm registry cannot be reached to install $package@$version:"
            tail -n 5 "$prefix/npm-install.log"
            exit 77
        fi
        echo "npm install $package@$version failed:"
        cat "$prefix/npm-install.log"
        exit 1
    fi
fi

WASTE_MCP_EVERYTHING="$prefix/node_modules/$package/dist/index.js" exec "$binary"
