#include "prompt/templatekind.h"

TemplateKind templateKindFor(const QString &arch, bool hasChatTemplate)
{
    if (arch == QLatin1String("kimi-k3"))
        return TemplateKind::K3;
    return hasChatTemplate ? TemplateKind::ChatMl : TemplateKind::Raw;
}

TemplateKind templateKindFor(const QVariantMap &modelInfo)
{
    return templateKindFor(modelInfo.value(QStringLiteral("arch")).toString(),
                           modelInfo.value(QStringLiteral("hasChatTemplate")).toBool());
}
