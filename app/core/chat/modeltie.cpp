#include "chat/modeltie.h"

#include "engine/enginecontroller.h"
#include "remote/remoteendpoint.h"
#include "remote/remotestore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace modeltie {

namespace {

QString normalised(const QString &path)
{
    return remoteendpoint::isRemotePath(path) ? path : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

bool stillThere(const QString &path)
{
    if (remoteendpoint::isRemotePath(path))
        return remotestore::find(remoteendpoint::idOf(path)).isValid();
    return QFileInfo::exists(path);
}

QString tr(const char *text)
{
    return QCoreApplication::translate("ModelTie", text);
}

} // namespace

State of(const Conversation &conversation, const EngineController &engine)
{
    if (conversation.id == 0 || conversation.modelPath.isEmpty())
        return State::Same;
    const bool open = engine.state() != EngineController::NoModel && engine.state() != EngineController::Failed
                      && !engine.modelPath().isEmpty();
    if (open && normalised(engine.modelPath()) == normalised(conversation.modelPath))
        return State::Same;
    return stillThere(conversation.modelPath) ? State::Other : State::Gone;
}

QString sendBlocked(const Conversation &conversation, const EngineController &engine)
{
    switch (of(conversation, engine)) {
    case State::Same:
        return {};
    case State::Other:
        return engine.modelName().isEmpty()
                   ? tr("This chat is with %1. Open it to go on (Open %1, above).").arg(conversation.modelName)
                   : tr("This chat is with %1, and %2 is open. Open %1 to go on (above), or choose to continue "
                        "with %2.").arg(conversation.modelName, engine.modelName());
    case State::Gone:
        return engine.modelName().isEmpty()
                   ? tr("This chat was with %1, which is no longer on this computer. Open another model to "
                        "continue it with that one.").arg(conversation.modelName)
                   : tr("This chat was with %1, which is no longer on this computer. Choose Continue with %2 "
                        "(above) to go on with it.").arg(conversation.modelName, engine.modelName());
    }
    return {};
}

} // namespace modeltie
