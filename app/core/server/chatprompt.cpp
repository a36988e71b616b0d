#include "server/chatprompt.h"

#include "prompt/templatesegments.h"

#include <QJsonDocument>

#include <string>
#include <vector>

RequestPrompt renderRequestPrompt(waste::ChatFormat format, const ApiRequest &request, const QStringList &imagePrompts)
{
    // Thinking follows the format's own default; the reply parser returns it as reasoning_content.
    std::vector<std::string> blocks;
    for (const QString &p : imagePrompts)
        blocks.push_back(p.toStdString());
    try {
        const waste::ChatPrompt prompt = waste::renderChatPrompt(
            format, QJsonDocument(request.body).toJson(QJsonDocument::Compact).toStdString(), blocks);
        return RequestPrompt{toPromptSegments(prompt.segments), int(prompt.sharedSegments)};
    } catch (const std::exception &e) {
        throw ApiError::invalid(QStringLiteral("messages"), QString::fromStdString(e.what()));
    }
}
