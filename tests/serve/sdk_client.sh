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

sh "$(dirname "$0")/../npm_package.sh" "$prefix" "$package" "$version" || exit $?

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
