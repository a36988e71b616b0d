#include "server/chatformat.h"

#include "prompt/templatesegments.h"

#include "text/chatml_template.hpp"
#include "text/k3_template.hpp"

#include <waste/waste.hpp>

#include <QJsonDocument>

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
            return toPromptSegments(waste::text::renderK3Json(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString()));
        }
        const auto json = nlohmann::ordered_json::parse(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
        QList<PromptSegment> segments = toPromptSegments(waste::text::renderChatMl(json));
        placeImageBlocks(segments, imagePrompts);
        return segments;
    } catch (const std::exception &e) {
        throw ApiError::invalid(QStringLiteral("messages"), QString::fromStdString(e.what()));
    }
}
