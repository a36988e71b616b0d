// Which prompt format a model gets: K3 containers use K3's XTML (engine/src/text/k3_template),
// containers that ship a chat template the engine's ChatML format (engine/src/text/chatml_template),
// anything else raw mode (a plain "role: text" transcript). The API server decides the same way.
#pragma once

#include <QString>
#include <QVariantMap>

enum class TemplateKind { Raw, ChatMl, K3 };

TemplateKind templateKindFor(const QString &arch, bool hasChatTemplate);
// From EngineController::modelInfo() ("arch", "hasChatTemplate").
TemplateKind templateKindFor(const QVariantMap &modelInfo);
