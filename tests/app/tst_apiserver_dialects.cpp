// The Responses and Messages APIs' pure pieces: their requests translated into the chat
// request the server runs (and refused with a 400 naming the field), the response store's
// bounds, and their replies' JSON and stream events built from the reply assembler's deltas.
#include "server/messagesjson.h"
#include "server/messagesrequest.h"
#include "server/responsesjson.h"
#include "server/responsesrequest.h"
#include "server/responsestore.h"

#include <QJsonDocument>
#include <QTest>

namespace {

QJsonObject obj(const char *json)
{
    return QJsonDocument::fromJson(json).object();
}

// The ApiError a parse throws (status 0 when it throws none).
template <typename F>
ApiError errorOf(F &&parse)
{
    try {
        parse();
    } catch (const ApiError &e) {
        return e;
    }
    ApiError none;
    none.status = 0;
    return none;
}

ApiError responsesError(const char *json)
{
    return errorOf([&] { parseResponsesRequest(obj(json), {}); });
}

ApiError messagesError(const char *json)
{
    return errorOf([&] { parseMessagesRequest(obj(json)); });
}

// Named SSE events: (name, payload) in order; the name must equal the payload's type.
QList<QPair<QString, QJsonObject>> events(const QByteArray &sse)
{
    QList<QPair<QString, QJsonObject>> out;
    for (const QByteArray &block : sse.split('\n')) {
        if (block.startsWith("event: "))
            out.append({QString::fromUtf8(block.mid(7)), {}});
        else if (block.startsWith("data: ") && !out.isEmpty())
            out.last().second = QJsonDocument::fromJson(block.mid(6)).object();
    }
    return out;
}

QStringList names(const QList<QPair<QString, QJsonObject>> &evs)
{
    QStringList n;
    for (const auto &e : evs)
        n << e.first;
    return n;
}

QJsonObject toolDelta(const QString &id, const QString &name, const QString &args)
{
    return {{"tool_calls", QJsonArray{QJsonObject{{"index", 0}, {"id", id}, {"type", "function"},
                                                  {"function", QJsonObject{{"name", name}, {"arguments", args}}}}}}};
}

} // namespace

class TestApiServerDialects : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void responsesInputBecomesChatMessages()
    {
        const ResponsesRequest r = parseResponsesRequest(obj(R"({"model":"m","instructions":"Be brief.",
            "input":[{"role":"developer","content":"D"},
                     {"type":"message","role":"user","content":[{"type":"input_text","text":"look"},
                        {"type":"input_image","image_url":"data:image/png;base64,aGVsbG8="}]},
                     {"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hmm"}]},
                     {"type":"message","role":"assistant","content":[{"type":"output_text","text":"calling"}]},
                     {"type":"function_call","call_id":"c1","name":"get_time","arguments":"{}"},
                     {"type":"function_call_output","call_id":"c1","output":"noon"}],
            "max_output_tokens":20,"temperature":0.5,"top_p":0.9})"), {});
        const QList<ApiChatMessage> &m = r.chat.messages;
        QCOMPARE(m.size(), 5);
        QCOMPARE(m[0].role, QStringLiteral("system"));
        QCOMPARE(m[0].text(), QStringLiteral("Be brief."));
        QCOMPARE(m[1].role, QStringLiteral("system")); // developer
        QCOMPARE(m[2].role, QStringLiteral("user"));
        QCOMPARE(m[2].parts.size(), 2);
        QCOMPARE(m[2].parts[1].kind, ContentPart::Image);
        QCOMPARE(m[2].parts[1].imageData, QByteArray("hello"));
        // The assistant's text, its call and the reasoning before them are one message.
        QCOMPARE(m[3].role, QStringLiteral("assistant"));
        QCOMPARE(m[3].text(), QStringLiteral("calling"));
        QCOMPARE(m[3].toolCalls.size(), 1);
        QCOMPARE(m[3].toolCalls[0].toObject().value("id").toString(), QStringLiteral("c1"));
        QCOMPARE(r.chat.body.value("messages").toArray()[3].toObject().value("reasoning_content").toString(),
                 QStringLiteral("hmm"));
        QCOMPARE(m[4].role, QStringLiteral("tool"));
        QCOMPARE(m[4].toolCallId, QStringLiteral("c1"));
        QCOMPARE(m[4].name, QStringLiteral("get_time"));
        QCOMPARE(m[4].text(), QStringLiteral("noon"));
        QCOMPARE(*r.chat.maxTokens, 20);
        QCOMPARE(r.chat.temperature, 0.5);
        QCOMPARE(r.chat.topP, 0.9);
        QCOMPARE(r.conversation.size(), 6); // instructions are not part of the conversation kept
        QCOMPARE(r.echo.value("instructions").toString(), QStringLiteral("Be brief."));
        QCOMPARE(r.echo.value("max_output_tokens").toInt(), 20);
        QVERIFY(r.store);
    }

    void responsesToolsFormatAndReasoning()
    {
        const ResponsesRequest r = parseResponsesRequest(obj(R"({"input":"hi",
            "tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"},"strict":true}],
            "tool_choice":{"type":"function","name":"get_weather"},
            "text":{"format":{"type":"json_schema","name":"p","schema":{"type":"object"}}},
            "reasoning":{"effort":"minimal"},"store":false})"), {});
        QCOMPARE(r.chat.tools.size(), 1);
        QCOMPARE(r.chat.tools[0].toObject().value("function").toObject().value("name").toString(),
                 QStringLiteral("get_weather"));
        QCOMPARE(r.chat.toolChoice, ToolChoice::Named);
        QCOMPARE(r.chat.toolName, QStringLiteral("get_weather"));
        QCOMPARE(r.chat.responseFormat, ResponseFormat::JsonSchema);
        QCOMPARE(r.chat.schemaName, QStringLiteral("p"));
        QCOMPARE(r.chat.body.value("reasoning_effort").toString(), QStringLiteral("none")); // thinking off
        QVERIFY(!r.store);
        QCOMPARE(r.chat.messages.size(), 1);
        QCOMPARE(r.chat.messages[0].text(), QStringLiteral("hi"));

        const auto effort = [](const char *e) {
            return parseResponsesRequest(obj(QByteArray(R"({"input":"x","reasoning":{"effort":")") + e + "\"}}"), {})
                .chat.body.value("reasoning_effort");
        };
        QCOMPARE(effort("low").toString(), QStringLiteral("low"));
        QVERIFY(effort("medium").isUndefined()); // the model's own default
        QCOMPARE(effort("xhigh").toString(), QStringLiteral("max"));
        QCOMPARE(parseResponsesRequest(obj(R"({"input":"x","tools":[{"type":"function","name":"f"}],
                                              "tool_choice":"required"})"), {}).chat.toolChoice,
                 ToolChoice::Required);
    }

    void responsesContinueAStoredConversation()
    {
        ResponseStore store;
        store.put("resp_1", QJsonDocument::fromJson(R"([{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"My name is Ada."}]},
            {"type":"message","role":"assistant","id":"msg_1","status":"completed",
             "content":[{"type":"output_text","text":"Hello Ada.","annotations":[]}]}])").array());
        const ResponseLookup lookup = [&](const QString &id) { return store.get(id); };
        const ResponsesRequest r =
            parseResponsesRequest(obj(R"({"previous_response_id":"resp_1","input":"What is my name?"})"), lookup);
        QCOMPARE(r.chat.messages.size(), 3);
        QCOMPARE(r.chat.messages[1].role, QStringLiteral("assistant"));
        QCOMPARE(r.chat.messages[1].text(), QStringLiteral("Hello Ada."));
        QCOMPARE(r.chat.messages[2].text(), QStringLiteral("What is my name?"));
        QCOMPARE(r.conversation.size(), 3);
        QCOMPARE(r.echo.value("previous_response_id").toString(), QStringLiteral("resp_1"));

        const ApiError e = errorOf([&] {
            parseResponsesRequest(obj(R"({"previous_response_id":"resp_gone","input":"x"})"), lookup);
        });
        QCOMPARE(e.status, 400);
        QCOMPARE(e.param, QStringLiteral("previous_response_id"));
        QCOMPARE(e.code, QStringLiteral("previous_response_not_found"));
    }

    void responsesMalformedRequestsAre400()
    {
        struct Case {
            const char *json;
            const char *param;
        };
        const Case cases[] = {
            {R"({"model":"m"})", "input"},
            {R"({"input":5})", "input"},
            {R"({"input":[{"type":"message","role":"robot","content":"x"}]})", "input[0].role"},
            {R"({"input":[{"role":"user"}]})", "input[0].content"},
            {R"({"input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})", "input[0].content[0].type"},
            {R"({"input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]})", "input[0].content[0].file_id"},
            {R"({"input":[{"role":"system","content":[{"type":"input_image","image_url":"data:image/png;base64,aGVsbG8="}]}]})",
             "input[0].content[0]"},
            {R"({"input":[{"type":"function_call","name":"f","arguments":"{}"}]})", "input[0].call_id"},
            {R"({"input":[{"type":"item_reference","id":"x"}]})", "input[0].type"},
            {R"({"input":"x","tools":[{"type":"web_search"}]})", "tools[0].type"},
            {R"({"input":"x","tools":[{"type":"function"}]})", "tools[0].name"},
            {R"({"input":"x","tool_choice":"sometimes"})", "tool_choice"},
            {R"({"input":"x","tool_choice":"required"})", "tool_choice"},
            {R"({"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}})",
             "tool_choice"},
            {R"({"input":"x","text":{"format":{"type":"xml"}}})", "text.format.type"},
            {R"({"input":"x","text":{"format":{"type":"json_schema","schema":{}}}})", "text.format.name"},
            {R"({"input":"x","reasoning":{"effort":"extreme"}})", "reasoning.effort"},
            {R"({"input":"x","max_output_tokens":0})", "max_output_tokens"},
            {R"({"input":"x","temperature":3})", "temperature"},
            {R"({"input":"x","background":true})", "background"},
            {R"({"input":"x","store":"yes"})", "store"},
        };
        for (const Case &c : cases) {
            const ApiError e = responsesError(c.json);
            QVERIFY2(e.status == 400, c.json);
            QVERIFY2(e.param == QLatin1String(c.param), qPrintable(QStringLiteral("%1: param %2").arg(c.json, e.param)));
            QVERIFY2(!e.message.isEmpty(), c.json);
            QCOMPARE(e.toJson().value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
        }
    }

    void responseStoreDropsTheOldest()
    {
        ResponseStore byCount(2);
        byCount.put("a", {1});
        byCount.put("b", {2});
        byCount.put("c", {3});
        QVERIFY(!byCount.get("a"));
        QVERIFY(byCount.get("b") && byCount.get("c"));
        QCOMPARE(byCount.size(), 2);

        const QJsonArray big{QString(100, QLatin1Char('x'))};
        const qint64 one = QJsonDocument(big).toJson(QJsonDocument::Compact).size();
        ResponseStore bySize(100, 2 * one);
        bySize.put("a", big);
        bySize.put("b", big);
        QCOMPARE(bySize.bytes(), 2 * one);
        bySize.put("c", big);
        QVERIFY(!bySize.get("a"));
        QCOMPARE(bySize.size(), 2);
        bySize.put("huge", QJsonArray{QString(1000, QLatin1Char('y'))}); // larger than the budget: not kept
        QVERIFY(!bySize.get("huge"));
        QCOMPARE(bySize.size(), 2);
        bySize.remove("b");
        QCOMPARE(bySize.bytes(), one);
    }

    void responsesStreamFollowsTheDocumentedSequence()
    {
        ResponseStore store;
        const ResponsesRequest req = parseResponsesRequest(obj(R"({"input":"hi","tools":[{"type":"function","name":"f"}]})"), {});
        ResponsesDialect d(req, "tiny", 1700000000, &store);
        QByteArray sse = d.streamStart(7);
        sse += d.streamDelta({{"reasoning_content", "think"}});
        sse += d.streamDelta({{"reasoning_content", "ing"}, {"content", "Hel"}});
        sse += d.streamDelta({{"content", "lo"}});
        sse += d.streamDelta(toolDelta("call_1", "f", R"({"a":1})"));
        ParsedReply reply{"Hello", {ToolCall{"call_1", "f", R"({"a":1})"}}, "thinking"};
        sse += d.streamEnd(reply, ReplyEnd{waste::FinishReason::Stop, {}, 7, 5, 2});

        const auto evs = events(sse);
        QCOMPARE(names(evs), (QStringList{
            "response.created", "response.in_progress",
            "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
            "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added", "response.content_part.added", "response.output_text.delta",
            "response.output_text.delta", "response.output_text.done", "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added", "response.function_call_arguments.delta",
            "response.function_call_arguments.done", "response.output_item.done",
            "response.completed"}));
        for (int i = 0; i < evs.size(); ++i) {
            QCOMPARE(evs[i].second.value("type").toString(), evs[i].first);
            QCOMPARE(evs[i].second.value("sequence_number").toInt(-1), i);
        }
        QCOMPARE(evs[0].second.value("response").toObject().value("status").toString(), QStringLiteral("in_progress"));
        QCOMPARE(evs[13].second.value("text").toString(), QStringLiteral("Hello"));
        QCOMPARE(evs[13].second.value("output_index").toInt(), 1);
        QCOMPARE(evs[16].second.value("output_index").toInt(), 2);
        const QJsonObject done = evs.last().second.value("response").toObject();
        QCOMPARE(done.value("id").toString(), d.id());
        QVERIFY(d.id().startsWith("resp_"));
        QCOMPARE(done.value("status").toString(), QStringLiteral("completed"));
        const QJsonArray output = done.value("output").toArray();
        QCOMPARE(output.size(), 3);
        QCOMPARE(output[0].toObject().value("type").toString(), QStringLiteral("reasoning"));
        QCOMPARE(output[0].toObject().value("content").toArray()[0].toObject().value("text").toString(),
                 QStringLiteral("thinking"));
        QCOMPARE(output[1].toObject().value("content").toArray()[0].toObject().value("text").toString(),
                 QStringLiteral("Hello"));
        const QJsonObject call = output[2].toObject();
        QCOMPARE(call.value("type").toString(), QStringLiteral("function_call"));
        QCOMPARE(call.value("call_id").toString(), QStringLiteral("call_1"));
        QCOMPARE(call.value("arguments").toString(), QStringLiteral(R"({"a":1})"));
        const QJsonObject usage = done.value("usage").toObject();
        QCOMPARE(usage.value("input_tokens").toInt(), 7);
        QCOMPARE(usage.value("output_tokens").toInt(), 5);
        QCOMPARE(usage.value("total_tokens").toInt(), 12);
        QCOMPARE(usage.value("input_tokens_details").toObject().value("cached_tokens").toInt(), 2);
        // Kept for previous_response_id: the input, then the output.
        const auto kept = store.get(d.id());
        QVERIFY(kept);
        QCOMPARE(kept->size(), 4);
        QCOMPARE(kept->at(3).toObject().value("type").toString(), QStringLiteral("function_call"));
    }

    void responsesWholeIncompleteAndFailed()
    {
        ResponseStore store;
        const ResponsesRequest req = parseResponsesRequest(obj(R"({"input":"hi","store":false,"max_output_tokens":3})"), {});
        ResponsesDialect d(req, "tiny", 1, &store);
        const QJsonObject body = d.body(ParsedReply{"abc", {}, {}}, ReplyEnd{waste::FinishReason::Length, {}, 4, 3, 0});
        QCOMPARE(body.value("object").toString(), QStringLiteral("response"));
        QCOMPARE(body.value("status").toString(), QStringLiteral("incomplete"));
        QCOMPARE(body.value("incomplete_details").toObject().value("reason").toString(),
                 QStringLiteral("max_output_tokens"));
        QCOMPARE(body.value("max_output_tokens").toInt(), 3);
        QCOMPARE(body.value("store").toBool(true), false);
        QCOMPARE(body.value("output").toArray().size(), 1);
        QCOMPARE(store.size(), 0); // store: false
        // A prompt the engine refuses is the request's input, in Responses' terms.
        QCOMPARE(d.errorBody(ApiError::invalid("messages", "too long", "context_length_exceeded"))
                     .value("error").toObject().value("param").toString(),
                 QStringLiteral("input"));

        // Reasoning alone is the whole output, streamed or not; nothing at all is one empty message.
        QCOMPARE(d.body(ParsedReply{{}, {}, "hmm"}, ReplyEnd{}).value("output").toArray().size(), 1);
        ResponsesDialect quiet(req, "tiny", 1, nullptr);
        const auto evsQuiet = events(quiet.streamStart(1) + quiet.streamEnd(ParsedReply{}, ReplyEnd{}));
        QCOMPARE(names(evsQuiet), (QStringList{"response.created", "response.in_progress", "response.output_item.added",
                                               "response.content_part.added", "response.output_text.done",
                                               "response.content_part.done", "response.output_item.done",
                                               "response.completed"}));
        QCOMPARE(evsQuiet.last().second.value("response").toObject().value("output").toArray().size(), 1);

        ResponsesDialect s(req, "tiny", 1, nullptr);
        QByteArray sse = s.streamStart(1) + s.streamDelta({{"content", "x"}});
        sse += s.streamError(ApiError::server("boom"));
        const auto evs = events(sse);
        QCOMPARE(evs[evs.size() - 2].first, QStringLiteral("error"));
        QCOMPARE(evs[evs.size() - 2].second.value("message").toString(), QStringLiteral("boom"));
        QCOMPARE(evs.last().first, QStringLiteral("response.failed"));
        QCOMPARE(evs.last().second.value("response").toObject().value("status").toString(), QStringLiteral("failed"));
        QCOMPARE(evs[evs.size() - 3].first, QStringLiteral("response.output_item.done")); // the open item closed first
    }

    void messagesBecomeChatMessages()
    {
        const MessagesRequest r = parseMessagesRequest(obj(R"({"model":"m","max_tokens":30,
            "system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],
            "messages":[
              {"role":"user","content":[{"type":"text","text":"look"},
                 {"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGVsbG8="}}]},
              {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},
                 {"type":"text","text":"let me check"},
                 {"type":"tool_use","id":"toolu_1","name":"get_time","input":{"tz":"UTC"}}]},
              {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"noon"},
                 {"type":"text","text":"and?"}]}],
            "stop_sequences":["END"],"temperature":0.2,"top_k":5,
            "tools":[{"name":"get_time","description":"time","input_schema":{"type":"object"}}],
            "tool_choice":{"type":"any"},"thinking":{"type":"enabled","budget_tokens":2048}})"));
        const QList<ApiChatMessage> &m = r.chat.messages;
        QCOMPARE(m.size(), 5);
        QCOMPARE(m[0].role, QStringLiteral("system"));
        QCOMPARE(m[0].text(), QStringLiteral("A\nB"));
        QCOMPARE(m[1].parts.size(), 2);
        QCOMPARE(m[1].parts[1].kind, ContentPart::Image);
        QCOMPARE(m[1].parts[1].imageMime, QStringLiteral("image/png"));
        QCOMPARE(m[2].role, QStringLiteral("assistant"));
        QCOMPARE(m[2].text(), QStringLiteral("let me check"));
        const QJsonObject fn = m[2].toolCalls[0].toObject().value("function").toObject();
        QCOMPARE(fn.value("arguments").toString(), QStringLiteral(R"({"tz":"UTC"})"));
        QCOMPARE(r.chat.body.value("messages").toArray()[2].toObject().value("reasoning_content").toString(),
                 QStringLiteral("hmm"));
        QCOMPARE(m[3].role, QStringLiteral("tool"));
        QCOMPARE(m[3].toolCallId, QStringLiteral("toolu_1"));
        QCOMPARE(m[3].name, QStringLiteral("get_time"));
        QCOMPARE(m[4].text(), QStringLiteral("and?"));
        QCOMPARE(*r.chat.maxTokens, 30);
        QCOMPARE(r.chat.stop, QStringList{"END"});
        QCOMPARE(r.chat.topK, 5);
        QCOMPARE(r.chat.toolChoice, ToolChoice::Required);
        QCOMPARE(r.chat.body.value("thinking").toBool(), true);
        // Thinking stays off unless asked for; tool results marked as errors say so.
        const MessagesRequest plain = parseMessagesRequest(obj(R"({"max_tokens":5,"messages":[
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,
               "content":[{"type":"text","text":"boom"}]}]}],
            "tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"f"}})"));
        QCOMPARE(plain.chat.body.value("thinking").toBool(true), false);
        QCOMPARE(plain.chat.messages[0].text(), QStringLiteral("Error: boom"));
        QCOMPARE(plain.chat.toolChoice, ToolChoice::Named);
        // count_tokens has no max_tokens.
        QCOMPARE(parseMessagesRequest(obj(R"({"messages":[{"role":"user","content":"x"}]})"), {}, true).chat.messages.size(), 1);
    }

    void messagesMalformedRequestsAre400()
    {
        struct Case {
            const char *json;
            const char *param;
        };
        const Case cases[] = {
            {R"({"messages":[{"role":"user","content":"x"}]})", "max_tokens"},
            {R"({"max_tokens":5})", "messages"},
            {R"({"max_tokens":5,"messages":[]})", "messages"},
            {R"({"max_tokens":0,"messages":[{"role":"user","content":"x"}]})", "max_tokens"},
            {R"({"max_tokens":5,"messages":[{"role":"system","content":"x"}]})", "messages[0].role"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"http://x"}}]}]})",
             "messages[0].content[0].source.type"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":[{"type":"document"}]}]})", "messages[0].content[0].type"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]})",
             "messages[0].content[0].type"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"temperature":1.5})", "temperature"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"stop_sequences":[""]})", "stop_sequences[0]"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f"}]})", "tools[0].input_schema"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"w"}]})",
             "tools[0].type"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"any"}})", "tool_choice"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"maybe"}})", "tool_choice.type"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":10}})",
             "thinking.budget_tokens"},
            {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"system":[{"type":"image"}]})", "system[0].type"},
        };
        for (const Case &c : cases) {
            const ApiError e = messagesError(c.json);
            QVERIFY2(e.status == 400, c.json);
            QVERIFY2(e.param == QLatin1String(c.param), qPrintable(QStringLiteral("%1: param %2").arg(c.json, e.param)));
            const QJsonObject body = anthropic::errorBody(e);
            QCOMPARE(body.value("type").toString(), QStringLiteral("error"));
            QCOMPARE(body.value("error").toObject().value("type").toString(), QStringLiteral("invalid_request_error"));
            QVERIFY(!body.value("error").toObject().value("message").toString().isEmpty());
        }
    }

    void anthropicErrorTypes()
    {
        QCOMPARE(anthropic::errorType(401), QStringLiteral("authentication_error"));
        QCOMPARE(anthropic::errorType(403), QStringLiteral("permission_error"));
        QCOMPARE(anthropic::errorType(404), QStringLiteral("not_found_error"));
        QCOMPARE(anthropic::errorType(405), QStringLiteral("invalid_request_error"));
        QCOMPARE(anthropic::errorType(413), QStringLiteral("request_too_large"));
        QCOMPARE(anthropic::errorType(429), QStringLiteral("rate_limit_error"));
        QCOMPARE(anthropic::errorType(500), QStringLiteral("api_error"));
        QCOMPARE(anthropic::errorType(503), QStringLiteral("overloaded_error"));
    }

    void stopSequenceIsTheOneThatEndedTheReply()
    {
        const QStringList stops{"END", "STOP"};
        QCOMPARE(anthropic::matchedStopSequence("<think>END</think>Hello STOP", "Hello", stops), QStringLiteral("STOP"));
        QCOMPARE(anthropic::matchedStopSequence("Hello ENDx", "Hello", stops), QStringLiteral("END"));
        QCOMPARE(anthropic::matchedStopSequence("Hello", "Hello", stops), QString());
        QCOMPARE(anthropic::matchedStopSequence("Hello END", "Hello", {}), QString());

        MessagesDialect d("tiny", stops);
        auto reason = [&](const ParsedReply &r, waste::FinishReason f, const QString &raw) {
            const QJsonObject b = d.body(r, ReplyEnd{f, raw, 3, 2, 0});
            return b.value("stop_reason").toString() + QLatin1Char('/') + b.value("stop_sequence").toString();
        };
        QCOMPARE(reason(ParsedReply{"Hi", {}, {}}, waste::FinishReason::Stop, "Hi"), QStringLiteral("end_turn/"));
        QCOMPARE(reason(ParsedReply{"Hi", {}, {}}, waste::FinishReason::Stop, "Hi END"), QStringLiteral("stop_sequence/END"));
        QCOMPARE(reason(ParsedReply{"Hi", {}, {}}, waste::FinishReason::Length, "Hi"), QStringLiteral("max_tokens/"));
        QCOMPARE(reason(ParsedReply{"", {ToolCall{"call_9", "f", "{}"}}, {}}, waste::FinishReason::Stop, "{}"),
                 QStringLiteral("tool_use/"));
    }

    void messagesWholeAndStreamed()
    {
        MessagesDialect d("tiny", {});
        const ParsedReply reply{"Hi", {ToolCall{"call_ab", "f", R"({"x":1})"}}, "hmm"};
        const ReplyEnd end{waste::FinishReason::Stop, {}, 10, 4, 3};
        const QJsonObject b = d.body(reply, end);
        QVERIFY(b.value("id").toString().startsWith("msg_"));
        QCOMPARE(b.value("type").toString(), QStringLiteral("message"));
        QCOMPARE(b.value("role").toString(), QStringLiteral("assistant"));
        const QJsonArray content = b.value("content").toArray();
        QCOMPARE(content.size(), 3);
        QCOMPARE(content[0].toObject().value("type").toString(), QStringLiteral("thinking"));
        QVERIFY(!content[0].toObject().value("signature").toString().isEmpty());
        QCOMPARE(content[1].toObject().value("text").toString(), QStringLiteral("Hi"));
        QCOMPARE(content[2].toObject().value("id").toString(), QStringLiteral("toolu_ab"));
        QCOMPARE(content[2].toObject().value("input").toObject().value("x").toInt(), 1);
        QCOMPARE(b.value("stop_reason").toString(), QStringLiteral("tool_use"));
        const QJsonObject usage = b.value("usage").toObject();
        QCOMPARE(usage.value("input_tokens").toInt(), 7); // cached prompt tokens count apart
        QCOMPARE(usage.value("cache_read_input_tokens").toInt(), 3);
        QCOMPARE(usage.value("output_tokens").toInt(), 4);

        QByteArray sse = d.streamStart(10);
        sse += d.streamDelta({{"reasoning_content", "hm"}});
        sse += d.streamDelta({{"reasoning_content", "m"}, {"content", "Hi"}});
        sse += d.streamDelta(toolDelta("call_ab", "f", R"({"x":1})"));
        sse += d.streamEnd(reply, end);
        const auto evs = events(sse);
        QCOMPARE(names(evs), (QStringList{"message_start", "ping",
                                          "content_block_start", "content_block_delta", "content_block_delta",
                                          "content_block_delta", "content_block_stop",
                                          "content_block_start", "content_block_delta", "content_block_stop",
                                          "content_block_start", "content_block_delta", "content_block_stop",
                                          "message_delta", "message_stop"}));
        for (const auto &e : evs)
            QCOMPARE(e.second.value("type").toString(), e.first);
        QCOMPARE(evs[0].second.value("message").toObject().value("usage").toObject().value("input_tokens").toInt(), 10);
        QCOMPARE(evs[5].second.value("delta").toObject().value("type").toString(), QStringLiteral("signature_delta"));
        QCOMPARE(evs[7].second.value("index").toInt(), 1);
        QCOMPARE(evs[8].second.value("delta").toObject().value("text").toString(), QStringLiteral("Hi"));
        QCOMPARE(evs[10].second.value("content_block").toObject().value("type").toString(), QStringLiteral("tool_use"));
        QCOMPARE(evs[11].second.value("delta").toObject().value("partial_json").toString(), QStringLiteral(R"({"x":1})"));
        QCOMPARE(evs[13].second.value("delta").toObject().value("stop_reason").toString(), QStringLiteral("tool_use"));
        QCOMPARE(evs[13].second.value("usage").toObject().value("output_tokens").toInt(), 4);

        // An empty reply still has its text block; an error ends the stream in Anthropic's shape.
        MessagesDialect e("tiny", {});
        const auto empty = events(e.streamStart(1) + e.streamEnd(ParsedReply{}, ReplyEnd{}));
        QCOMPARE(names(empty), (QStringList{"message_start", "ping", "content_block_start", "content_block_stop",
                                            "message_delta", "message_stop"}));
        const auto failed = events(e.streamError(ApiError::server("boom")));
        QCOMPARE(failed.last().first, QStringLiteral("error"));
        QCOMPARE(failed.last().second.value("error").toObject().value("type").toString(), QStringLiteral("api_error"));
    }
};

QTEST_GUILESS_MAIN(TestApiServerDialects)
#include "tst_apiserver_dialects.moc"
