// A chat or text completion request, parsed from its JSON body and checked field by field.
// Every problem becomes an ApiError (400) naming the field; nothing here touches the engine.
#pragma once

#include "server/apierror.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

struct ContentPart {
    enum Kind { Text, Image };
    Kind kind = Text;
    QString text;
    QByteArray imageData;  // decoded data: URL
    QString imageMime;     // "image/png", ...
    QString imagePath;     // local file (only when the server allows local images)
};

struct ApiChatMessage {
    QString role; // system, user, assistant, tool (developer is read as system)
    QList<ContentPart> parts;
    QString name;
    QString toolCallId;  // role tool: the call this result answers
    QJsonArray toolCalls; // role assistant: calls it made earlier, as sent

    QString text() const; // the text parts joined
};

enum class ToolChoice { Auto, None, Required, Named };
enum class ResponseFormat { Text, JsonObject, JsonSchema };

struct ApiRequest {
    enum Kind { Chat, Completion };
    Kind kind = Chat;
    QString model;
    QList<ApiChatMessage> messages; // chat
    QString prompt;              // completion

    bool stream = false;
    bool includeUsage = false;
    std::optional<int> maxTokens;
    double temperature = 1.0;
    double topP = 1.0;
    int topK = 0;
    // skip_special_tokens (vLLM's name; default true): false keeps the special tokens the
    // model writes as text, on the raw completions route only (a chat's reply is parsed).
    bool keepSpecialText = false;
    std::optional<quint64> seed;
    QStringList stop;

    QJsonArray tools; // OpenAI "tools" array, function tools only
    ToolChoice toolChoice = ToolChoice::Auto;
    QString toolName; // ToolChoice::Named

    ResponseFormat responseFormat = ResponseFormat::Text;
    QJsonObject schema; // JsonSchema: the schema itself
    QString schemaName;

    QJsonObject body; // the chat request as sent: chat templates read it whole

    bool hasImages() const;
    // Tool calls are possible in the reply (tools given and tool_choice is not none).
    bool toolsActive() const { return !tools.isEmpty() && toolChoice != ToolChoice::None; }
    // The output is forced to be one tool call.
    bool toolCallForced() const
    {
        return !tools.isEmpty() && (toolChoice == ToolChoice::Required || toolChoice == ToolChoice::Named);
    }
};

struct ParseOptions {
    bool allowLocalImages = false;
    qint64 maxImageBytes = 32ll * 1024 * 1024;
};

// Parses a JSON body into an object; malformed JSON or a non-object is an ApiError.
QJsonObject parseJsonBody(const QByteArray &body);
ApiRequest parseChatRequest(const QJsonObject &body, const ParseOptions &options = {});
ApiRequest parseCompletionRequest(const QJsonObject &body, const ParseOptions &options = {});
