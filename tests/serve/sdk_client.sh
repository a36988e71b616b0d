#!/bin/sh
# An official npm SDK (`openai`, `@anthropic-ai/sdk`) against `waste serve`: installs the
# pinned package into the build tree once (npm install --prefix, reused by later runs and by
# the npm cache), then runs the conformance script with it. Exits 77 (ctest
# SKIP_RETURN_CODE) with the reason only when node/npm are missing or too old, or the npm
# registry cannot be reached.
# usage: sdk_client.sh PREFIX PACKAGE VERSION SCRIPT WASTE_CLI MODEL
#   MODEL: a container directory, or arch:A for the tiny model of architecture A, made
#   here as a user would (`waste mktiny T --arch A --hf`, then `waste convert`) into the
#   build tree, again whenever WASTE_CLI is newer; the script is then told the architecture.
set -u
prefix=$1 package=$2 version=$3 script=$4 cli=$5 model=$6
arch=

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "SKIP: the $package client test needs node and npm (Debian: apt-get install nodejs npm)"
    exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    echo "SKIP: node $(node --version) is too old for $package@$version (node 18 or later)"
    exit 77
fi

have() { node -p "require('$prefix/node_modules/$package/package.json').version" 2>/dev/null; }
mkdir -p "$prefix"
(
    flock 9 # the runs on several models may start together: one installs, the others wait
    if [ "$(have)" != "$version" ]; then
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
) 9>"$prefix/.lock"
status=$?
[ $status -ne 0 ] && exit $status

case $model in
arch:*)
    arch=${model#arch:}
    tiny=$(dirname "$prefix")/tiny-$arch
    mkdir -p "$tiny"
    (
        flock 9 # the openai and anthropic runs on one arch may start together
        if [ ! "$tiny/$arch.waste/manifest.json" -nt "$cli" ]; then
            rm -rf "$tiny/hf" "$tiny/$arch.waste"
            "$cli" mktiny "$tiny/hf" --arch "$arch" --hf >"$tiny/make.log" 2>&1 &&
                "$cli" convert "$tiny/hf" "$tiny/$arch.waste" >>"$tiny/make.log" 2>&1 || {
                echo "the tiny $arch model could not be made:"
                cat "$tiny/make.log"
                exit 1
            }
        fi
    ) 9>"$tiny/.lock" || exit 1
    model=$tiny/$arch.waste
    ;;
esac

exec node "$script" "$prefix" "$cli" "$model" $arch
