// Remote engines against a real OpenAI-compatible server: `waste serve` on the tiny test
// containers, in a child process. A remote engine is added from its /v1/models (its key kept
// apart from the settings, like the hub token), listed in the library, opened, and chatted
// with through the chat page's controller exactly as a local model: the answers are the
// server's own (compared with the same request sent to it directly), reasoning arrives as
// reasoning, images travel as data URLs, and Stop cancels the HTTP request. Then the ways it
// fails: nothing listening, a refused key (401), a server stopped between messages, a model
// that disappears from /v1/models, and a stream cut mid-answer by killing the server. Each
// gives a sentence that says what happened, and no chat text is lost.
#include "chat/chatcontroller.h"
#include "chat/conversationstore.h"
#include "library/modellibrary.h"
#include "engine/enginecontroller.h"
#include "engine/generationhandle.h"
#include "httptestclient.h"
#include "remote/remoteendpointeditor.h"
#include "remote/remotestore.h"
#include "remote/sseparser.h"
#include "wasteserveprocess.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kR3 = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");
const QString kK3 = QStringLiteral(WASTE_FIXTURES_DIR "/k3-container/k3s1.waste");
const QString kVision = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/v1.waste");
const QString kImage = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");

using Headers = QList<QPair<QByteArray, QByteArray>>;

QJsonObject userMessage(const QString &text)
{
    return {{"role", "user"}, {"content", text}};
}

// The answer the server streams for `messages` when asked directly (greedy, like the chat's):
// what a chat through the remote engine must show, piece for piece.
struct Direct {
    QString content;
    QString reasoning;
    QString finish;
    int completionTokens = 0;
    int promptTokens = 0;
};

Direct askDirectly(int port, const QString &model, const QJsonArray &messages, int maxTokens, const Headers &auth = {})
{
    HttpTestClient client(port);
    const HttpResult r = client.post("/v1/chat/completions",
                                     QJsonObject{{"model", model}, {"messages", messages}, {"max_tokens", maxTokens},
                                                 {"temperature", 0.0}, {"stream", true},
                                                 {"stream_options", QJsonObject{{"include_usage", true}}}},
                                     auth);
    Direct d;
    for (const QByteArray &event : sseData(r.body)) {
        const QJsonObject o = QJsonDocument::fromJson(event).object();
        const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
        d.content += choice.value("delta").toObject().value("content").toString();
        d.reasoning += choice.value("delta").toObject().value("reasoning_content").toString();
        if (!choice.value("finish_reason").toString().isEmpty())
            d.finish = choice.value("finish_reason").toString();
        if (o.contains("usage") && o.value("usage").isObject()) {
            d.completionTokens = o.value("usage").toObject().value("completion_tokens").toInt();
            d.promptTokens = o.value("usage").toObject().value("prompt_tokens").toInt();
        }
    }
    return d;
}

QString messageText(ChatController &chat, int row, int role = MessageModel::TextRole)
{
    return chat.messages()->index(row).data(role).toString();
}

} // namespace

class TestRemoteEngine : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<WasteServe> m_r3; // `waste serve` on r3, for the tests that need no other

    QString dbPath(const QString &name) const { return m_dir.filePath(name); }

    // Adds model `model` of the server at `port` through the dialog's controller; its path.
    static QString addThroughEditor(int port, const QString &model, const QString &key = {})
    {
        RemoteEndpointEditor editor;
        editor.setBaseUrl(QStringLiteral("127.0.0.1:%1").arg(port));
        editor.setApiKey(key);
        editor.listModels();
        if (!QTest::qWaitFor([&] { return !editor.busy(); }, 20000) || !editor.models().contains(model)) {
            qWarning("listing models failed: %s", qPrintable(editor.error()));
            return {};
        }
        return editor.add(model);
    }

    static bool open(EngineController &engine, const QString &path)
    {
        engine.openModel(path);
        return QTest::qWaitFor([&] { return engine.state() == EngineController::Ready || engine.state() == EngineController::Failed; },
                               20000)
               && engine.state() == EngineController::Ready;
    }

    // Sends `text` and waits for the answer to be saved (finished, stopped or failed).
    static bool sendAndWait(ChatController &chat, const QString &text, int timeoutMs = 60000)
    {
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        if (!chat.send(text))
            return false;
        return saved.wait(timeoutMs) || saved.count() > 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true);
        // Settings under the test-mode config folder too, never the user's ~/.config.
        const QString config = QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config);
        QCoreApplication::setApplicationName(QStringLiteral("WASTE Studio tst_remote_engine"));
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)).removeRecursively();
        QSettings().clear();
        m_r3 = std::make_unique<WasteServe>(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(m_r3->start(kR3, {"--model-id", "tiny-remote", "--ctx", "4096"}), qPrintable(m_r3->error()));
    }

    void cleanupTestCase()
    {
        m_r3.reset();
    }

    void addressesAndStreamPieces()
    {
        using remoteendpoint::normaliseBaseUrl;
        QCOMPARE(normaliseBaseUrl("gpu-box:8000").toString(), QStringLiteral("http://gpu-box:8000/v1"));
        QCOMPARE(normaliseBaseUrl(" https://api.example.com/v1/ ").toString(), QStringLiteral("https://api.example.com/v1"));
        QCOMPARE(normaliseBaseUrl("http://host/proxy/").toString(), QStringLiteral("http://host/proxy/v1"));
        QVERIFY(!normaliseBaseUrl("ftp://host").isValid());
        QVERIFY(!normaliseBaseUrl("").isValid());
        QCOMPARE(remoteendpoint::routeUrl(QUrl("http://h:1/v1"), "/chat/completions").toString(),
                 QStringLiteral("http://h:1/v1/chat/completions"));
        QCOMPARE(remoteendpoint::idOf(remoteendpoint::pathFor("abc")), QStringLiteral("abc"));
        QVERIFY(!remoteendpoint::isRemotePath("/models/remote:abc"));

        // Events cut anywhere (mid-line, mid-character, between \r and \n) come out whole.
        const QByteArray stream = ": keep-alive\r\n\r\ndata: {\"a\":\"é\"}\r\n\r\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n";
        for (int cut = 1; cut < stream.size(); ++cut) {
            SseParser sse;
            QList<QByteArray> events = sse.feed(stream.left(cut));
            events += sse.feed(stream.mid(cut));
            QCOMPARE(events, (QList<QByteArray>{"{\"a\":\"é\"}", "one\ntwo", "[DONE]"}));
            QVERIFY(!sse.hasPartialEvent());
        }
        SseParser cut;
        QCOMPARE(cut.feed("data: {\"half"), QList<QByteArray>());
        QVERIFY(cut.hasPartialEvent());
    }

    void addingReadsTheModelListAndKeepsTheKeyApart()
    {
        RemoteEndpointEditor editor;
        editor.setBaseUrl(QStringLiteral("ftp://nowhere"));
        QCOMPARE(editor.resolvedUrl(), QString());
        editor.listModels();
        QVERIFY(editor.error().contains("is not a server address"));

        // What people paste from a server's log: no scheme, no /v1.
        editor.setBaseUrl(QStringLiteral("127.0.0.1:%1").arg(m_r3->port()));
        QCOMPARE(editor.resolvedUrl(), m_r3->baseUrl());
        editor.setApiKey(QStringLiteral("sk-kept-apart"));
        editor.listModels();
        QVERIFY(editor.busy());
        QTRY_VERIFY_WITH_TIMEOUT(!editor.busy(), 20000);
        QCOMPARE(editor.error(), QString());
        QCOMPARE(editor.models(), QStringList{"tiny-remote"});
        editor.setName(QStringLiteral("Tiny over the network"));
        const QString path = editor.add(QStringLiteral("tiny-remote"));
        QVERIFY2(path.startsWith("remote:"), qPrintable(editor.error()));

        // The key: in an owner-only file of its own, never in the settings file.
        const QString id = path.mid(7);
        QFile key(remotestore::keyPath(id));
        QVERIFY(key.exists());
        QCOMPARE(key.permissions() & (QFile::ReadGroup | QFile::WriteGroup | QFile::ReadOther | QFile::WriteOther),
                 QFile::Permissions());
        QCOMPARE(remotestore::loadKey(id), QStringLiteral("sk-kept-apart"));
        QSettings().sync();
        QFile settings(QSettings().fileName());
        QVERIFY(settings.open(QIODevice::ReadOnly));
        const QByteArray settingsText = settings.readAll();
        QVERIFY(settingsText.contains("tiny-remote"));
        QVERIFY(!settingsText.contains("sk-kept-apart"));

        // Listed in the library as remote, openable, and removable (with its key).
        ModelLibrary library;
        library.setFolder(m_dir.path());
        QTRY_VERIFY_WITH_TIMEOUT(!library.busy() && library.rowCount() == 1, 10000);
        const QModelIndex row = library.index(0);
        QCOMPARE(row.data(ModelLibrary::KindRole).toString(), QStringLiteral("remote"));
        QCOMPARE(row.data(ModelLibrary::PathRole).toString(), path);
        QCOMPARE(row.data(ModelLibrary::NameRole).toString(), QStringLiteral("Tiny over the network"));
        QVERIFY(row.data(ModelLibrary::CanOpenRole).toBool());
        QSignalSpy removed(&library, &ModelLibrary::removed);
        library.remove(path);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.at(0).at(2).toString(), QString());
        QVERIFY(!remotestore::find(id).isValid());
        QVERIFY(!QFile::exists(remotestore::keyPath(id)));
        QTRY_VERIFY_WITH_TIMEOUT(!library.busy() && library.rowCount() == 0, 10000);
    }

    void chatStreamsTheServersOwnAnswer()
    {
        const QString path = addThroughEditor(m_r3->port(), QStringLiteral("tiny-remote"));
        QVERIFY(!path.isEmpty());
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        QVERIFY(engine.isRemote());
        QCOMPARE(engine.modelName(), QStringLiteral("tiny-remote on 127.0.0.1"));
        QCOMPARE(engine.modelPath(), path);

        ChatController chat(&engine, dbPath(QStringLiteral("stream.sqlite")), nullptr);
        chat.setTemperature(0.0);
        chat.setMaxTokens(24);
        // The answer arrives in pieces before it ends, as from a local model.
        int streamedPieces = 0;
        bool ended = false;
        connect(&engine, &EngineController::generationQueued, this, [&](GenerationHandle *h) {
            connect(h, &GenerationHandle::reply, this, [&](const waste::ReplyDelta &d) {
                if (!ended && !d.content.empty())
                    ++streamedPieces;
            });
            connect(h, &GenerationHandle::finished, this, [&] { ended = true; });
        });
        QVERIFY(sendAndWait(chat, QStringLiteral("Tell me a story.")));
        QCOMPARE(chat.messages()->rowCount(), 2);
        QCOMPARE(messageText(chat, 1, MessageModel::ErrorRole), QString());
        QVERIFY(streamedPieces >= 1);

        const QJsonArray first{userMessage("Tell me a story.")};
        const Direct d1 = askDirectly(m_r3->port(), "tiny-remote", first, 24);
        QVERIFY(!d1.content.trimmed().isEmpty());
        QCOMPARE(messageText(chat, 1).trimmed(), d1.content.trimmed());
        QCOMPARE(messageText(chat, 1, MessageModel::FinishReasonRole), d1.finish);
        QCOMPARE(chat.messages()->index(1).data(MessageModel::TokensRole).toInt(), d1.completionTokens);

        // The history goes back as OpenAI messages: the second answer is the server's answer
        // to the whole conversation.
        QVERIFY(sendAndWait(chat, QStringLiteral("And then?")));
        QCOMPARE(chat.messages()->rowCount(), 4);
        const Direct d2 = askDirectly(m_r3->port(), "tiny-remote",
                                      {userMessage("Tell me a story."),
                                       QJsonObject{{"role", "assistant"}, {"content", d1.content}},
                                       userMessage("And then?")},
                                      24);
        QCOMPARE(messageText(chat, 3).trimmed(), d2.content.trimmed());
        remotestore::remove(path.mid(7));
    }

    void toolCallsGoThroughAndNoHitRateIsMadeUp()
    {
        // Offered tools and a forced call go to the server as OpenAI fields; the call it
        // streams back comes out whole in the reply, and its result goes back as a tool
        // message the server accepts. The expert cache is the server's: no hit rate here.
        const QString path = addThroughEditor(m_r3->port(), QStringLiteral("tiny-remote"));
        QVERIFY(!path.isEmpty());
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        const QJsonArray tools{QJsonObject{
            {"type", "function"},
            {"function", QJsonObject{{"name", "get_weather"},
                                     {"parameters", QJsonObject{{"type", "object"},
                                                                {"properties", QJsonObject{{"city", QJsonObject{{"type", "string"}}}}},
                                                                {"required", QJsonArray{"city"}}}}}}}};
        const auto run = [&](const Dialogue &dialogue, GenerationResult *out) {
            GenerationRequest request;
            request.dialogue = dialogue;
            request.params.maxTokens = 64;
            request.params.temperature = 0;
            request.parseReply = true;
            GenerationHandle *h = engine.generate(request);
            QSignalSpy finished(h, &GenerationHandle::finished);
            QSignalSpy failed(h, &GenerationHandle::failed);
            QVERIFY(QTest::qWaitFor([&] { return !finished.isEmpty() || !failed.isEmpty(); }, 60000));
            QVERIFY2(failed.isEmpty(), qPrintable(failed.isEmpty() ? QString() : failed.first().first().value<GenerationError>().message));
            *out = finished.first().first().value<GenerationResult>();
        };
        Dialogue d;
        d.turns << DialogueTurn{QStringLiteral("user"), QStringLiteral("Weather in Oslo?")};
        d.tools = tools;
        d.toolChoice = QStringLiteral("get_weather");
        GenerationResult first;
        run(d, &first);
        QCOMPARE(first.reply.toolCalls.size(), size_t(1));
        QCOMPARE(first.reply.toolCalls.front().name, std::string("get_weather"));
        const QJsonDocument args = QJsonDocument::fromJson(QByteArray::fromStdString(first.reply.toolCalls.front().arguments));
        QVERIFY2(args.isObject() && args.object().value("city").isString(), first.reply.toolCalls.front().arguments.c_str());
        QVERIFY(!first.reply.toolCalls.front().id.empty());
        QCOMPARE(first.stats.hitRate, -1.0);

        DialogueTurn answer;
        answer.role = QStringLiteral("assistant");
        answer.toolCalls = QJsonArray{QJsonObject{
            {"id", "call_1"}, {"type", "function"},
            {"function", QJsonObject{{"name", "get_weather"}, {"arguments", QString::fromStdString(first.reply.toolCalls.front().arguments)}}}}};
        DialogueTurn result;
        result.role = QStringLiteral("tool");
        result.toolCallId = QStringLiteral("call_1");
        result.toolName = QStringLiteral("get_weather");
        result.text = QStringLiteral("Sunny, 21 C");
        d.turns << answer << result;
        d.toolChoice.clear();
        GenerationResult second;
        run(d, &second);
        QVERIFY(second.stats.promptTokens > first.stats.promptTokens);
        remotestore::remove(path.mid(7));
    }

    void reasoningArrivesAsReasoning()
    {
        WasteServe k3(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(k3.start(kK3, {"--model-id", "k3-remote"}), qPrintable(k3.error()));
        const Direct direct = askDirectly(k3.port(), "k3-remote", {userMessage("Think first.")}, 24);
        QVERIFY2(!direct.reasoning.isEmpty(), "the K3 test model gives no reasoning_content: nothing to compare");

        const QString path = addThroughEditor(k3.port(), QStringLiteral("k3-remote"));
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        ChatController chat(&engine, dbPath(QStringLiteral("reasoning.sqlite")), nullptr);
        chat.setTemperature(0.0);
        chat.setMaxTokens(24);
        chat.setThinking(true);
        QVERIFY(sendAndWait(chat, QStringLiteral("Think first.")));
        QCOMPARE(messageText(chat, 1, MessageModel::ErrorRole), QString());
        QCOMPARE(messageText(chat, 1, MessageModel::ThinkingRole).trimmed(), direct.reasoning.trimmed());
        QCOMPARE(messageText(chat, 1).trimmed(), direct.content.trimmed());
        remotestore::remove(path.mid(7));
    }

    void imagesTravelAsDataUrls()
    {
        WasteServe vision(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(vision.start(kVision, {"--model-id", "eyes"}), qPrintable(vision.error()));
        QFile image(kImage);
        QVERIFY(image.open(QIODevice::ReadOnly));
        const QString dataUrl = QStringLiteral("data:image/png;base64,") + QString::fromLatin1(image.readAll().toBase64());
        const QJsonArray parts{QJsonObject{{"type", "image_url"}, {"image_url", QJsonObject{{"url", dataUrl}}}},
                               QJsonObject{{"type", "text"}, {"text", "What is this?"}}};
        const Direct withImage = askDirectly(vision.port(), "eyes", {QJsonObject{{"role", "user"}, {"content", parts}}}, 16);
        const Direct without = askDirectly(vision.port(), "eyes", {userMessage("What is this?")}, 16);
        // The tiny model's words hardly depend on the picture; its prompt does (the image's
        // positions): the prompt's size tells whether the picture arrived.
        QVERIFY2(withImage.promptTokens > without.promptTokens, "the image adds nothing to the prompt: this test could not tell");

        const QString path = addThroughEditor(vision.port(), QStringLiteral("eyes"));
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        ChatController chat(&engine, dbPath(QStringLiteral("images.sqlite")), nullptr);
        chat.setTemperature(0.0);
        chat.setMaxTokens(16); // the chat's least
        int promptTokens = -1;
        connect(&engine, &EngineController::generationQueued, this, [&](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [&](const GenerationResult &r) { promptTokens = r.stats.promptTokens; });
        });
        QVERIFY2(chat.addAttachment(QUrl::fromLocalFile(kImage)), qPrintable(chat.notice()));
        QVERIFY(sendAndWait(chat, QStringLiteral("What is this?")));
        QCOMPARE(messageText(chat, 1, MessageModel::ErrorRole), QString());
        QCOMPARE(messageText(chat, 1).trimmed(), withImage.content.trimmed());
        QCOMPARE(promptTokens, withImage.promptTokens);
        remotestore::remove(path.mid(7));
    }

    void stopCancelsTheHttpRequest()
    {
        // A long context, so an answer the server kept generating would run for many seconds.
        WasteServe server(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(server.start(kR3, {"--model-id", "long-winded", "--ctx", "32768"}), qPrintable(server.error()));
        const QString path = addThroughEditor(server.port(), QStringLiteral("long-winded"));
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        ChatController chat(&engine, dbPath(QStringLiteral("stop.sqlite")), nullptr);
        chat.setTemperature(0.0); // greedy: the tiny model never ends early (no EOS)
        chat.setMaxTokens(30000);
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        QVERIFY(chat.send(QStringLiteral("Go on and on.")));
        QTRY_VERIFY_WITH_TIMEOUT(!messageText(chat, 1).isEmpty(), 30000);
        QElapsedTimer clock;
        clock.start();
        chat.stop();
        // Stop ends the answer long before its 30,000 tokens would; the bound is loose for loaded machines.
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 15000);
        QVERIFY(clock.elapsed() < 10000);
        QCOMPARE(messageText(chat, 1, MessageModel::FinishReasonRole), QStringLiteral("cancelled"));
        QVERIFY(!messageText(chat, 1).isEmpty()); // what streamed stays
        QCOMPARE(messageText(chat, 1, MessageModel::ErrorRole), QString());
        // The server saw its client go and stopped generating at once, long before the
        // 30000 tokens it was asked for.
        HttpTestClient client(server.port());
        QTRY_COMPARE_WITH_TIMEOUT(client.get("/health").json().value("active_requests").toInt(), 0, 3000);
        remotestore::remove(path.mid(7));
    }

    void nothingListeningIsNamed()
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const int port = probe.serverPort();
        probe.close(); // a port where nothing listens now

        RemoteEndpointEditor editor;
        editor.setBaseUrl(QStringLiteral("http://127.0.0.1:%1").arg(port));
        editor.listModels();
        QTRY_VERIFY_WITH_TIMEOUT(!editor.busy(), 20000);
        QVERIFY2(editor.error().contains(QStringLiteral("Nothing answers at http://127.0.0.1:%1/v1").arg(port)),
                 qPrintable(editor.error()));

        RemoteEndpoint e;
        e.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port));
        e.model = QStringLiteral("gone");
        QString id;
        QCOMPARE(remotestore::add(e, {}, &id), QString());
        EngineController engine(nullptr);
        QSignalSpy failed(&engine, &EngineController::modelOpenFailed);
        QVERIFY(!open(engine, remoteendpoint::pathFor(id)));
        QCOMPARE(engine.state(), EngineController::Failed);
        QVERIFY2(engine.errorString().contains("connection refused"), qPrintable(engine.errorString()));
        QCOMPARE(failed.count(), 1);
        remotestore::remove(id);
    }

    void refusedKeyIsNamedAndKeepsTheChat()
    {
        WasteServe keyed(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(keyed.start(kR3, {"--model-id", "keyed", "--api-key", "sk-right"}), qPrintable(keyed.error()));

        // The wrong key: listing and opening both say the key was refused.
        RemoteEndpointEditor editor;
        editor.setBaseUrl(keyed.baseUrl());
        editor.setApiKey(QStringLiteral("sk-wrong"));
        editor.listModels();
        QTRY_VERIFY_WITH_TIMEOUT(!editor.busy(), 20000);
        QVERIFY2(editor.error().contains("refused the API key (HTTP 401)"), qPrintable(editor.error()));
        RemoteEndpoint e;
        e.baseUrl = QUrl(keyed.baseUrl());
        e.model = QStringLiteral("keyed");
        QString wrongId;
        QCOMPARE(remotestore::add(e, QStringLiteral("sk-wrong"), &wrongId), QString());
        EngineController engine(nullptr);
        QVERIFY(!open(engine, remoteendpoint::pathFor(wrongId)));
        QVERIFY2(engine.errorString().contains("refused the API key (HTTP 401)"), qPrintable(engine.errorString()));

        // The right key works; then the server comes back (same port) with another key:
        // the next message says so and the conversation so far stays.
        const QString path = addThroughEditor(keyed.port(), QStringLiteral("keyed"), QStringLiteral("sk-right"));
        QVERIFY(!path.isEmpty());
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        ChatController chat(&engine, dbPath(QStringLiteral("key.sqlite")), nullptr);
        chat.setTemperature(0.0);
        chat.setMaxTokens(8);
        QVERIFY(sendAndWait(chat, QStringLiteral("Hello")));
        const QString firstAnswer = messageText(chat, 1);
        QVERIFY(!firstAnswer.isEmpty());
        const int port = keyed.port();
        keyed.stop();
        QVERIFY2(keyed.start(kR3, {"--model-id", "keyed", "--api-key", "sk-rotated"}, port), qPrintable(keyed.error()));
        QVERIFY(sendAndWait(chat, QStringLiteral("Still there?")));
        QCOMPARE(chat.messages()->rowCount(), 4);
        QVERIFY2(messageText(chat, 3, MessageModel::ErrorRole).contains("refused the API key (HTTP 401)"),
                 qPrintable(messageText(chat, 3, MessageModel::ErrorRole)));
        QCOMPARE(messageText(chat, 0), QStringLiteral("Hello"));
        QCOMPARE(messageText(chat, 1), firstAnswer);
        QCOMPARE(messageText(chat, 2), QStringLiteral("Still there?"));
        remotestore::remove(wrongId);
        remotestore::remove(path.mid(7));
    }

    void serverStoppedOrModelGoneBetweenMessages()
    {
        WasteServe server(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(server.start(kR3, {"--model-id", "first-model"}), qPrintable(server.error()));
        const int port = server.port();
        const QString path = addThroughEditor(port, QStringLiteral("first-model"));
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        const QString db = dbPath(QStringLiteral("gone.sqlite"));
        ChatController chat(&engine, db, nullptr);
        chat.setTemperature(0.0);
        chat.setMaxTokens(8);
        QVERIFY(sendAndWait(chat, QStringLiteral("Hello")));
        const QString firstAnswer = messageText(chat, 1);
        QVERIFY(!firstAnswer.isEmpty());

        QVERIFY(engine.unreachable().isEmpty());
        QCOMPARE(engine.stateText(), QStringLiteral("ready"));

        // The server stops between two messages: the answer says why, and the status bar stops
        // saying "ready" until the server answers again.
        server.stop();
        QVERIFY(sendAndWait(chat, QStringLiteral("Are you there?")));
        QVERIFY2(messageText(chat, 3, MessageModel::ErrorRole).contains("connection refused"),
                 qPrintable(messageText(chat, 3, MessageModel::ErrorRole)));
        QVERIFY2(engine.unreachable().contains("connection refused"), qPrintable(engine.unreachable() + " / " + engine.stateText()));
        QCOMPARE(engine.stateText(), QStringLiteral("not answering"));

        // It comes back on the same address serving another model: the one chosen is gone.
        QVERIFY2(server.start(kR3, {"--model-id", "other-model"}, port), qPrintable(server.error()));
        QVERIFY(sendAndWait(chat, QStringLiteral("And now?")));
        const QString gone = messageText(chat, 5, MessageModel::ErrorRole);
        QVERIFY2(gone.contains("no longer serves the model \"first-model\"") && gone.contains("other-model"), qPrintable(gone));
        QVERIFY(engine.unreachable().isEmpty()); // it answered (another model, but it answered)
        QCOMPARE(engine.stateText(), QStringLiteral("ready"));

        // Nothing said before was lost, on screen or in the store.
        const QStringList expected{"Hello", firstAnswer, "Are you there?", QString(), "And now?", QString()};
        QCOMPARE(chat.messages()->rowCount(), 6);
        for (int i = 0; i < expected.size(); ++i)
            QCOMPARE(messageText(chat, i), expected[i]);
        ConversationStore store(db);
        const QList<ChatMessage> kept = store.messages(chat.currentId());
        QCOMPARE(kept.size(), 6);
        QCOMPARE(kept.at(1).text, firstAnswer);
        QVERIFY(kept.at(5).error.contains("first-model"));
        remotestore::remove(path.mid(7));
    }

    void streamCutMidAnswerKeepsWhatArrived()
    {
        WasteServe server(QStringLiteral(WASTE_CLI_PATH));
        QVERIFY2(server.start(kR3, {"--model-id", "fragile", "--ctx", "32768"}), qPrintable(server.error()));
        const QString path = addThroughEditor(server.port(), QStringLiteral("fragile"));
        EngineController engine(nullptr);
        QVERIFY2(open(engine, path), qPrintable(engine.errorString()));
        const QString db = dbPath(QStringLiteral("cut.sqlite"));
        ChatController chat(&engine, db, nullptr);
        chat.setTemperature(0.0); // greedy: the tiny model never ends early (no EOS)
        chat.setMaxTokens(30000);
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        QVERIFY(chat.send(QStringLiteral("Go on and on.")));
        QTRY_VERIFY_WITH_TIMEOUT(messageText(chat, 1).size() > 8, 30000);
        const QString before = messageText(chat, 1);
        server.kill();
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
        const QString error = messageText(chat, 1, MessageModel::ErrorRole);
        QVERIFY2(error.contains("closed the connection before the answer was complete")
                     || error.contains("ended before the answer was complete"),
                 qPrintable(error));
        QVERIFY(messageText(chat, 1).startsWith(before));
        ConversationStore store(db);
        const QList<ChatMessage> kept = store.messages(chat.currentId());
        QCOMPARE(kept.size(), 2);
        QVERIFY(kept.at(1).text.startsWith(before));
        QCOMPARE(kept.at(1).error, error);
        remotestore::remove(path.mid(7));
    }
};

QTEST_GUILESS_MAIN(TestRemoteEngine)
#include "tst_remote_engine.moc"
