// Kimi K3 in the GUI: a tiny K3-shaped model (`waste mktiny --k3 --vision`) answers on the
// chat page with a dropped picture, through K3's own prompt format, and gives the very tokens
// the API server gives for the same request at temperature 0 — thinking off and on. A
// follow-up feeds only the new turn. Any QML warning fails the test.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "httptestclient.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kPng = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");
constexpr int kMaxTokens = 16; // the chat page's smallest answer length

QString dataUrl(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QStringLiteral("data:image/png;base64,") + QString::fromLatin1(f.readAll().toBase64())
                                       : QString();
}

} // namespace

class TestChatK3 : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_model;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("chat-k3 test"));
        WindowTest::collectWarnings();
        m_model = m_dir.filePath(QStringLiteral("tiny-k3"));
        waste::TinyModelOptions options;
        options.k3 = true;
        options.vision = true;
        waste::makeTinyContainer(m_model.toStdString(), options);
    }

    void k3AnswersOnTheChatPageAsTheApiServerDoes()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);

        EngineController *engine = services->engine.get();
        engine->openModel(m_model, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        QCOMPARE(engine->modelInfo().value(QStringLiteral("arch")).toString(), QStringLiteral("kimi-k3"));
        QVERIFY(engine->hasVision());
        ChatController *chat = services->chat.get();
        chat->setTemperature(0);
        chat->setMaxTokens(kMaxTokens);
        chat->setThinking(false);

        QList<GenerationResult> results;
        connect(engine, &EngineController::generationQueued, this, [this, &results](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [&results](const GenerationResult &r) { results << r; });
        });
        QSignalSpy saved(chat, &ChatController::answerSaved);

        // Picture dropped on the window, question typed, Enter.
        WindowTest::dropFile(window, kPng);
        QCOMPARE(chat->attachments(), QStringList{kPng});
        auto *composer = window->findChild<QQuickItem *>(QStringLiteral("composer"));
        QVERIFY(composer);
        composer->forceActiveFocus();
        QTRY_VERIFY(composer->hasActiveFocus());
        const QString question = QStringLiteral("What is in this picture?");
        WindowTest::typeText(window, question);
        QTest::keyClick(window, Qt::Key_Return);
        // Counted, not waited for: a short answer can be saved while the key press is still
        // being delivered, before a wait() would start listening.
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 60000);
        QCOMPARE(results.size(), 1);
        const GenerationResult gui = results.first();
        QVERIFY(!gui.tokens.isEmpty());
        QVERIFY(chat->messages()->index(1).data(MessageModel::ErrorRole).toString().isEmpty());
        QVERIFY(gui.stats.prefilledTokens > gui.stats.promptTokens); // the picture's positions

        // The same request through the API server, thinking off as on the chat page (the
        // server follows K3's default, on, unless told). The server reads the reply as it
        // goes and stops where the K3 message ends, the chat page reads to its token limit:
        // the server's tokens are the chat page's up to there.
        auto sameTokens = [](const GenerationResult &api, const GenerationResult &page) {
            return api.tokens == page.tokens.mid(0, api.tokens.size())
                && (api.tokens.size() == page.tokens.size() || api.finishReason == waste::FinishReason::Stop);
        };
        ApiServer *server = services->server.get();
        server->setPort(0);
        QVERIFY2(server->start(), qPrintable(server->errorString()));
        HttpTestClient client(server->boundPort());
        const QJsonObject body{
            {"model", "tiny-k3"},
            {"messages", QJsonArray{QJsonObject{
                             {"role", "user"},
                             {"content", QJsonArray{QJsonObject{{"type", "image_url"}, {"image_url", QJsonObject{{"url", dataUrl(kPng)}}}},
                                                    QJsonObject{{"type", "text"}, {"text", question}}}}}}},
            {"max_tokens", kMaxTokens},
            {"temperature", 0},
            {"thinking", false}};
        HttpResult r = client.post(QStringLiteral("/v1/chat/completions"), body);
        QCOMPARE(r.status, 200);
        QCOMPARE(results.size(), 2);
        QCOMPARE(results.last().stats.promptTokens, gui.stats.promptTokens);
        QVERIFY(sameTokens(results.last(), gui));

        // Thinking on in both: a different prompt (the think channel opens), the same tokens again.
        chat->newConversation();
        chat->setTemperature(0);
        chat->setMaxTokens(kMaxTokens);
        chat->setThinking(true);
        QVERIFY2(chat->send(QStringLiteral("Think first, then answer: what is two plus two?")), qPrintable(chat->notice()));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, 60000);
        QCOMPARE(results.size(), 3);
        const GenerationResult thinkingGui = results.last();
        QJsonObject thinkingBody{
            {"model", "tiny-k3"},
            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Think first, then answer: what is two plus two?"}}}},
            {"max_tokens", kMaxTokens},
            {"temperature", 0},
            {"thinking", true}};
        r = client.post(QStringLiteral("/v1/chat/completions"), thinkingBody);
        QCOMPARE(r.status, 200);
        QCOMPARE(results.size(), 4);
        QCOMPARE(results.last().stats.promptTokens, thinkingGui.stats.promptTokens);
        QVERIFY(sameTokens(results.last(), thinkingGui));
        thinkingBody.insert(QStringLiteral("thinking"), false);
        r = client.post(QStringLiteral("/v1/chat/completions"), thinkingBody);
        QCOMPARE(r.status, 200);
        QVERIFY(results.last().stats.promptTokens != thinkingGui.stats.promptTokens); // the switch reaches the prompt
        server->stop();

        // Follow-up in the GUI: only the new turn is fed.
        composer->forceActiveFocus();
        WindowTest::typeText(window, QStringLiteral("And three plus three?"));
        QTest::keyClick(window, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 3, 60000);
        QVERIFY(chat->messages()->rowCount() == 4);
        const GenerationStats followUp = results.last().stats;
        QCOMPARE(followUp.prefilledTokens, followUp.promptTokens - followUp.reusedTokens);
        QVERIFY2(followUp.reusedTokens > thinkingGui.stats.promptTokens,
                 qPrintable(QStringLiteral("%1 kept of %2").arg(followUp.reusedTokens).arg(followUp.promptTokens)));
        qInfo("K3 image turn: %d prompt tokens, %d positions; follow-up: %d prompt tokens, %d kept, %d prefilled",
              gui.stats.promptTokens, gui.stats.prefilledTokens, followUp.promptTokens, followUp.reusedTokens,
              followUp.prefilledTokens);

        QTest::qWait(100);
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestChatK3 t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_chat_k3.moc"
