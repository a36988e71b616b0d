#!/usr/bin/env bash
# Builds the packages with cpack, checks the .deb's metadata and contents, unpacks it and
# starts the packaged CLI and app (offscreen). Fails loudly on the first problem.
set -euo pipefail
build=$1; out=$2
rm -rf "$out"; mkdir -p "$out"
(cd "$build" && cpack -B "$out" >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/*.deb); tgz=$(ls "$out"/*.tar.gz)
echo "built $(basename "$deb") and $(basename "$tgz")"

depends=$(dpkg-deb -f "$deb" Depends)
for need in libqt6core6 libqt6qml6 qml6-module-qtquick-controls qml6-module-qtcharts libqt6sql6-sqlite qt6-image-formats-plugins; do
  grep -q "$need" <<<"$depends" || { echo "Depends lacks $need: $depends"; exit 1; }
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/waste ./usr/bin/waste-studio ./usr/share/applications/studio.waste.WasteStudio.desktop \
         ./usr/share/icons/hicolor/scalable/apps/waste-studio.svg; do
  grep -q " $f\$" <<<"$contents" || { echo "package lacks $f"; exit 1; }
done

root="$out/root"; dpkg-deb -x "$deb" "$root"
"$root/usr/bin/waste" version | grep -q "container v0"
HOME="$out/home" timeout 60 "$root/usr/bin/waste-studio" --self-test | grep -q "started"
echo "package ok: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
