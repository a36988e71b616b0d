#include "library/remotelibrary.h"

#include "remote/remotestore.h"

namespace remotelibrary {

QList<ModelLibrary::Entry> entries()
{
    QList<ModelLibrary::Entry> out;
    for (const RemoteEndpoint &e : remotestore::list()) {
        ModelLibrary::Entry row;
        row.name = e.name;
        row.path = remoteendpoint::pathFor(e.id);
        row.kind = QStringLiteral("remote");
        out << row;
    }
    return out;
}

} // namespace remotelibrary
