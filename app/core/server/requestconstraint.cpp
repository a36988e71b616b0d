#include "server/requestconstraint.h"

#include <QJsonDocument>

#include <string>

ConstraintFactory constraintFor(const ApiRequest &request)
{
    if (request.kind == ApiRequest::Chat && request.toolCallForced()) {
        const std::string tools = QJsonDocument(request.tools).toJson(QJsonDocument::Compact).toStdString();
        const std::string name = request.toolChoice == ToolChoice::Named ? request.toolName.toStdString() : std::string();
        return [tools, name](const waste::Model &model, int maxTokens, std::span<const int32_t> prompt) {
            return waste::makeToolCallConstraint(model, tools, name, maxTokens, prompt);
        };
    }
    switch (request.responseFormat) {
    case ResponseFormat::Text:
        return {};
    case ResponseFormat::JsonObject:
        return [](const waste::Model &model, int maxTokens, std::span<const int32_t> prompt) {
            return waste::makeJsonConstraint(model, std::string_view(), maxTokens, prompt);
        };
    case ResponseFormat::JsonSchema: {
        const std::string schema = QJsonDocument(request.schema).toJson(QJsonDocument::Compact).toStdString();
        return [schema](const waste::Model &model, int maxTokens, std::span<const int32_t> prompt) {
            return waste::makeJsonConstraint(model, schema, maxTokens, prompt);
        };
    }
    }
    return {};
}
