// The releases the Models page offers with one click: the families the engine runs, each
// with the repository on the hub and what the download weighs. Sizes are the safetensors of
// the release in its own encoding (decimal GB, as the hub lists them); the hub's listing
// gives the exact figure once a preset is picked, and the release plan card says whether it
// will run here. tst_release_presets checks every size against the release's config.json
// (tests/fixtures/release-configs): parameters times the bytes its encoding spends on each.
#pragma once

#include <QList>
#include <QString>
#include <QVariantList>

namespace ReleasePresets {

struct Preset {
    QString name;
    QString repo;       // owner/name on the hub
    qint64 approxBytes; // the release's safetensors
    QString note;       // parameters, encoding, what it is for
    bool featured = false; // a button of its own; the rest are in the "More releases" list
};

QList<Preset> all();
// For QML: maps with name, repo, approxBytes, sizeText ("about 690 GB"), label
// ("DeepSeek-R1 · about 690 GB"), note and featured.
QVariantList asVariants();
// "about 98 GB", "about 1.4 TB": two significant figures, decimal units as the hub uses.
QString sizeText(qint64 bytes);

} // namespace ReleasePresets
