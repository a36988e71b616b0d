#!/bin/sh
# Runs tst_mcp_everything against the reference MCP server from npm,
# @modelcontextprotocol/server-everything, installed into the build tree once (npm install
# --prefix; later runs and the npm cache reuse it). Exits 77 (ctest SKIP_RETURN_CODE) with
# the reason only when node/npm are missing or too old, or the npm registry cannot be reached.
# usage: mcp_everything.sh PREFIX VERSION TEST_BINARY
set -u
prefix=$1 version=$2 binary=$3
package=@modelcontextprotocol/server-everything

sh "$(dirname "$0")/../npm_package.sh" "$prefix" "$package" "$version" || exit $?

WASTE_MCP_EVERYTHING="$prefix/node_modules/$package/dist/index.js" exec "$binary"
