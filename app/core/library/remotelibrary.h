// The remote engines as rows of the Models page's library (library/modellibrary.h): kind
// "remote", path "remote:ID", no bytes on this disk. Read from the settings on the scan's
// pool thread (QSettings is reentrant), so they appear with the containers in one refresh.
#pragma once

#include "library/modellibrary.h"

namespace remotelibrary {

QList<ModelLibrary::Entry> entries();

} // namespace remotelibrary
