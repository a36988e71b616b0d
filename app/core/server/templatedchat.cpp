#include "server/templatedchat.h"

#include "prompt/templatesegments.h"

#include <QJsonDocument>

#include <string>
#include <vector>

QList<PromptSegment> renderTemplatedChat(waste::ChatFormat format, const ApiRequest &request, const QStringList &imagePrompts)
{
    // K3's thinking follows its own default (on); the reply parser returns it as reasoning_content.
    std::vector<std::string> blocks;
    for (const QString &p : imagePrompts)
        blocks.push_back(p.toStdString());
    try {
        return toPromptSegments(
            waste::renderChat(format, QJsonDocument(request.body).toJson(QJsonDocument::Compact).toStdString(), blocks));
    } catch (const std::exception &e) {
        throw ApiError::invalid(QStringLiteral("messages"), QString::fromStdString(e.what()));
    }
}
