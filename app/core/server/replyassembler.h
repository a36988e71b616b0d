// Turns a parsed reply (waste::ReplyDelta steps from the model's reply parser) into what
// an OpenAI client receives: stream deltas ("reasoning_content", "content", "tool_calls")
// as soon as they are known, and the whole message at the end.
//
// - Tool calls count only for functions the request declared while tools are active;
//   any other call the model writes stays visible as text (<tool_call>{...}</tool_call>).
// - K3 (structure from special tokens) streams everything as it comes; each call goes
//   out when it completes.
// - Text formats with tools: the parser already holds back only text that may be the
//   start of a <tool_call> block. A reply whose content starts with '{' or '[' may be a
//   bare JSON call, so that content is held to the end and then read as calls or
//   released as text.
// - A forced call (tool_choice required or named) comes in the format's own call layout
//   and is read by the parser like any other, except in the Plain format, where it is
//   the whole output, a JSON object its constraint produced, read at the end.
#pragma once

#include "server/apirequest.h"
#include "server/toolcallparser.h"

#include <waste/waste.hpp>

#include <QJsonObject>
#include <QList>
#include <QSet>

class ChatReplyAssembler {
public:
    ChatReplyAssembler(waste::ChatFormat format, const ApiRequest &request);

    // One parser step; returns the stream deltas that may go out now (possibly none).
    QList<QJsonObject> push(const waste::ReplyDelta &delta);
    // Generation ended; rawText is the model's whole raw output. Returns the last deltas.
    QList<QJsonObject> finish(const QString &rawText);

    // The message so far (complete after finish()).
    const ParsedReply &reply() const { return m_reply; }

private:
    QJsonObject deltaOf(const QString &reasoning, const QString &content, const QList<ToolCall> &calls);
    void takeCalls(const std::vector<waste::ReplyToolCall> &calls, QString &content, QList<ToolCall> &accepted);

    waste::ChatFormat m_format;
    QJsonArray m_tools;
    QSet<QString> m_names; // declared functions, empty when tools are not active
    bool m_forcedJson = false;   // a forced call written as bare JSON (Plain)
    bool m_mayBeBareJson = false; // tools active in a text format
    bool m_holdContent = false;   // decided: content may be a bare JSON call
    bool m_contentSeen = false;
    QString m_heldContent;
    ParsedReply m_reply;
};
