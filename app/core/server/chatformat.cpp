#include "chatformat.h"

#include "text/chatml_template.hpp"
#include "text/k3_template.hpp"

#include <waste/waste.hpp>

#include <QJsonDocument>

namespace {

QList<PromptSegment> toSegments(const waste::text::Segments &segments)
{
    QList<PromptSegment> out;
    out.reserve(qsizetype(segments.size()));
    for (const waste::text::Segment &s : segments)
        out.append(PromptSegment{QString::fromStdString(s.text), s.markup});
    return out;
}

} // namespace

ChatFormat chatFormatFor(const QVariantMap &modelInfo)
{
    if (modelInfo.value(QStringLiteral("arch")).toString() == QLatin1String("kimi-k3"))
        return ChatFormat::K3;
    if (modelInfo.value(QStringLiteral("hasChatTemplate")).toBool())
        return ChatFormat::ChatMl;
    return ChatFormat::Raw;
}

QList<PromptSegment> renderTemplatedChat(ChatFormat format, const ApiRequest &request, const QStringList &imagePrompts)
{
    QJsonObject body = request.body;
    try {
        if (format == ChatFormat::K3) {
            QJsonArray prompts;
            for (const QString &p : imagePrompts)
                prompts.append(p);
            body.insert(QStringLiteral("image_prompts"), prompts);
            // Thinking follows K3's own default (on); the reply parser returns it as reasoning_content.
            return toSegments(waste::text::renderK3Json(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString()));
        }
        const auto json = nlohmann::ordered_json::parse(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
        return toSegments(waste::text::renderChatMl(json));
    } catch (const std::exception &e) {
        throw ApiError::invalid(QStringLiteral("messages"), QString::fromStdString(e.what()));
    }
}
