// Images end to end in the GUI: a PNG dropped on the main window with the tiny vision model
// open becomes an attachment, Enter sends it, and the model answers; the API server, given the
// same picture as an image_url data URL and the same words at temperature 0, produces the same
// tokens. A second question keeps the image in the engine state: it is not encoded or read
// again. Any QML warning fails the test.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "httptestclient.h"
#include "server/apiserver.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kVision = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/v1.waste");
const QString kPng = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");
const QString kQuestion = QStringLiteral("Describe the picture.");
constexpr int kMaxTokens = 16;

// `waste mktiny --vision`: a tiny container with a vision tower and a ChatML template, in `dir`.
QString tinyVisionModel(const QTemporaryDir &dir)
{
    const QString model = dir.filePath(QStringLiteral("tiny-vision"));
    waste::TinyModelOptions options;
    options.vision = true;
    waste::makeTinyContainer(model.toStdString(), options);
    return model;
}

} // namespace

class TestChatVision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        // Its own data folder (chat database, states, images): ctest runs the other window tests at the same time.
        WindowTest::useOwnAppData(QStringLiteral("chat-vision test"));
        WindowTest::collectWarnings();
    }

    void droppedImageIsAnsweredAsTheApiServerAnswersIt()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);

        EngineController *engine = services->engine.get();
        engine->openModel(kVision, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        QVERIFY(engine->hasVision());
        ChatController *chat = services->chat.get();
        chat->setTemperature(0);
        chat->setMaxTokens(kMaxTokens);

        // Start elsewhere: the drop brings the chat page forward.
        window->setProperty("currentPage", 0);
        WindowTest::dropFile(window, kPng);
        QCOMPARE(chat->attachments(), QStringList{kPng});
        QVERIFY2(chat->notice().isEmpty(), qPrintable(chat->notice()));
        const QStringList pages = window->property("pageNames").toStringList();
        QCOMPARE(pages.at(window->property("currentPage").toInt()), QStringLiteral("Chat"));

        // Type the question and press Enter, as a person would.
        auto *composer = window->findChild<QQuickItem *>(QStringLiteral("composer"));
        QVERIFY(composer);
        composer->forceActiveFocus();
        QTRY_VERIFY(composer->hasActiveFocus());
        WindowTest::typeText(window, kQuestion);
        QList<GenerationResult> results;
        connect(engine, &EngineController::generationQueued, this, [this, &results](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [&results](const GenerationResult &r) { results << r; });
        });
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QTest::keyClick(window, Qt::Key_Return);
        // Counted, not waited for: a short answer can be saved while the key press is still
        // being delivered, before a wait() would start listening.
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 60000);
        QCOMPARE(chat->messages()->rowCount(), 2);
        const QModelIndex question = chat->messages()->index(0);
        QCOMPARE(question.data(MessageModel::TextRole).toString(), kQuestion);
        // The conversation keeps its own copy of the picture, beside the chat database.
        const QStringList kept = question.data(MessageModel::ImagesRole).toStringList();
        QCOMPARE(kept.size(), 1);
        QVERIFY2(kept.first().startsWith(services->settings->dataFolder()), qPrintable(kept.first()));
        QFile copy(kept.first());
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QFile original(kPng);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), original.readAll());
        const QModelIndex answer = chat->messages()->index(1);
        QVERIFY(answer.data(MessageModel::ErrorRole).toString().isEmpty());
        QVERIFY2(!answer.data(MessageModel::TextRole).toString().trimmed().isEmpty(), "the model gave no answer");
        QCOMPARE(results.size(), 1);
        const GenerationResult gui = results.first();
        QVERIFY(!gui.tokens.isEmpty());
        // The image took positions of its own beyond its one placeholder token.
        QVERIFY2(gui.stats.prefilledTokens > gui.stats.promptTokens,
                 qPrintable(QStringLiteral("%1 positions for %2 tokens").arg(gui.stats.prefilledTokens).arg(gui.stats.promptTokens)));

        // The same picture and words through the API server, at temperature 0.
        ApiServer *server = services->server.get();
        server->setPort(0);
        QVERIFY2(server->start(), qPrintable(server->errorString()));
        HttpTestClient client(server->boundPort());
        QFile png(kPng);
        QVERIFY(png.open(QIODevice::ReadOnly));
        const QString dataUrl = QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.readAll().toBase64());
        const QJsonObject body{
            {"model", "v1"},
            {"messages", QJsonArray{QJsonObject{
                             {"role", "user"},
                             {"content", QJsonArray{QJsonObject{{"type", "image_url"}, {"image_url", QJsonObject{{"url", dataUrl}}}},
                                                    QJsonObject{{"type", "text"}, {"text", kQuestion}}}}}}},
            {"max_tokens", kMaxTokens},
            {"temperature", 0}};
        const HttpResult r = client.post(QStringLiteral("/v1/chat/completions"), body);
        QCOMPARE(r.status, 200);
        QCOMPARE(results.size(), 2);
        const GenerationResult api = results.last();
        QCOMPARE(api.tokens, gui.tokens);
        QCOMPARE(api.text, gui.text);
        QCOMPARE(api.stats.promptTokens, gui.stats.promptTokens);
        QCOMPARE(api.stats.prefilledTokens, gui.stats.prefilledTokens);
        const QJsonObject reply = r.json();
        QCOMPARE(reply.value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString(),
                 gui.text);
        QCOMPARE(reply.value("usage").toObject().value("completion_tokens").toInt(), int(gui.tokens.size()));
        server->stop();

        // A follow-up in the GUI: only the new words are fed; the picture stays in the state
        // (the API request left the very same tokens there) and is not read again.
        composer->forceActiveFocus();
        WindowTest::typeText(window, QStringLiteral("What colour is it?"));
        QTest::keyClick(window, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, 60000);
        QCOMPARE(results.size(), 3);
        const GenerationStats followUp = results.last().stats;
        QVERIFY(followUp.reusedTokens > gui.stats.promptTokens);
        QCOMPARE(followUp.prefilledTokens, followUp.promptTokens - followUp.reusedTokens);
        qInfo("image turn: %d prompt tokens, %d positions; follow-up: %d prompt tokens, %d kept, %d prefilled",
              gui.stats.promptTokens, gui.stats.prefilledTokens, followUp.promptTokens, followUp.reusedTokens,
              followUp.prefilledTokens);

        QTest::qWait(100); // let the views take the last changes
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void templatedVisionModelReadsTheImage()
    {
        // `waste mktiny --vision`: a container with a ChatML template, so the picture goes
        // where the template puts the image part, as a media block.
        QTemporaryDir dir;
        const QString model = tinyVisionModel(dir);
        EngineController engine(nullptr);
        engine.openModel(model, 0, 2048);
        QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
        QVERIFY(engine.modelInfo().value(QStringLiteral("hasChatTemplate")).toBool());
        ChatController chat(&engine, dir.filePath(QStringLiteral("chat.sqlite")), nullptr);
        chat.setTemperature(0);
        chat.setMaxTokens(kMaxTokens);
        QList<GenerationResult> results;
        connect(&engine, &EngineController::generationQueued, this, [this, &results](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [&results](const GenerationResult &r) { results << r; });
        });
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        // Attached from a folder the user empties afterwards.
        const QString picture = dir.filePath(QStringLiteral("holiday.png"));
        QVERIFY(QFile::copy(kPng, picture));
        QVERIFY(chat.addAttachment(QUrl::fromLocalFile(picture)));
        QVERIFY2(chat.send(kQuestion), qPrintable(chat.notice()));
        QVERIFY(QFile::remove(picture));
        QVERIFY(saved.wait(60000));
        QCOMPARE(results.size(), 1);
        QVERIFY(chat.messages()->index(1).data(MessageModel::ErrorRole).toString().isEmpty());
        QVERIFY(!results.first().tokens.isEmpty());
        QVERIFY(results.first().stats.prefilledTokens > results.first().stats.promptTokens);
        QVERIFY(chat.send(QStringLiteral("And the colours?")));
        QVERIFY(saved.wait(60000));
        QVERIFY(results.last().stats.reusedTokens > results.first().stats.promptTokens);
        QCOMPARE(results.last().stats.prefilledTokens, results.last().stats.promptTokens - results.last().stats.reusedTokens);

        // Regenerating reads the whole conversation again, picture included: from the copy.
        QVERIFY(chat.regenerate());
        QVERIFY(saved.wait(60000));
        QVERIFY2(chat.messages()->index(3).data(MessageModel::ErrorRole).toString().isEmpty(),
                 qPrintable(chat.messages()->index(3).data(MessageModel::ErrorRole).toString()));
        QVERIFY(chat.notice().isEmpty());
        QCOMPARE(results.last().stats.reusedTokens, 0);
        QVERIFY(results.last().stats.prefilledTokens > results.last().stats.promptTokens);
        const QString copy = chat.messages()->index(0).data(MessageModel::ImagesRole).toStringList().value(0);

        // The API server puts the picture where the ChatML template marks it, as the chat page
        // does: the same tokens at temperature 0.
        ApiServer server(&engine, nullptr);
        server.setPort(0);
        QVERIFY2(server.start(), qPrintable(server.errorString()));
        HttpTestClient client(server.boundPort());
        QFile png(kPng);
        QVERIFY(png.open(QIODevice::ReadOnly));
        const QJsonObject body{
            {"model", "tiny-vision"},
            {"messages", QJsonArray{QJsonObject{
                             {"role", "user"},
                             {"content", QJsonArray{QJsonObject{{"type", "image_url"},
                                                                {"image_url", QJsonObject{{"url", QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.readAll().toBase64())}}}},
                                                    QJsonObject{{"type", "text"}, {"text", kQuestion}}}}}}},
            {"max_tokens", kMaxTokens},
            {"temperature", 0}};
        const HttpResult r = client.post(QStringLiteral("/v1/chat/completions"), body);
        QVERIFY2(r.status == 200, r.body.constData());
        QCOMPARE(results.last().stats.promptTokens, results.first().stats.promptTokens);
        QCOMPARE(results.last().tokens, results.first().tokens);
        // A data URL that is not a picture: 400, naming the image as the client sent it.
        QJsonObject notImage = body;
        notImage["messages"] = QJsonArray{QJsonObject{
            {"role", "user"},
            {"content", QJsonArray{QJsonObject{{"type", "image_url"},
                                               {"image_url", QJsonObject{{"url", "data:image/png;base64,aGVsbG8gd29ybGQ="}}}}}}}};
        const HttpResult bad = client.post(QStringLiteral("/v1/chat/completions"), notImage);
        QCOMPARE(bad.status, 400);
        QVERIFY2(bad.errorMessage().contains(QLatin1String("image 1 (data URL)")) && bad.errorMessage().contains(QLatin1String("not an image")),
                 qPrintable(bad.errorMessage()));
        server.stop();

        QVERIFY(QFileInfo::exists(copy));
        chat.deleteConversation(chat.currentId());
        QVERIFY(!QFileInfo::exists(copy));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    // The prompt cache on disk (issue 36): the system prompt a text request, or a first request
    // with a picture, left there is read from it by a request that sends a picture after it,
    // and every answer is the fresh read's.
    void aSystemPromptBeforeAPictureIsKeptAndReadFromThePromptCache()
    {
        QTemporaryDir dir;
        const QString model = tinyVisionModel(dir);
        QFile png(kPng);
        QVERIFY(png.open(QIODevice::ReadOnly));
        const QString picture = QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.readAll().toBase64());
        const QString system = QStringLiteral("You describe pictures for people who cannot see them. Say what is in the "
                                              "middle first, then the edges, then the colours, in plain words.");
        auto request = [&](bool withPicture) {
            QJsonArray content{QJsonObject{{"type", "text"}, {"text", kQuestion}}};
            if (withPicture)
                content.prepend(QJsonObject{{"type", "image_url"}, {"image_url", QJsonObject{{"url", picture}}}});
            return QJsonObject{{"messages", QJsonArray{QJsonObject{{"role", "system"}, {"content", system}},
                                                       QJsonObject{{"role", "user"}, {"content", content}}}},
                               {"max_tokens", kMaxTokens},
                               {"temperature", 0}};
        };
        struct Answer {
            int status = 0, cached = -1;
            QString content;
        };
        auto ask = [](HttpTestClient &client, const QJsonObject &body) {
            const HttpResult r = client.post(QStringLiteral("/v1/chat/completions"), body);
            Answer a;
            a.status = r.status;
            a.cached = r.json().value("usage").toObject().value("prompt_tokens_details").toObject().value("cached_tokens").toInt(-1);
            a.content = r.json().value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString();
            return a;
        };
        // Each request's prefill progress (done, total), in the order the server sent them.
        QList<QList<std::pair<int, int>>> reads;
        auto serve = [&](const QString &cacheDir, auto &&body) {
            EngineController engine(nullptr);
            reads.clear();
            connect(&engine, &EngineController::generationQueued, this, [&reads](GenerationHandle *h) {
                const qsizetype k = reads.size();
                reads.append(QList<std::pair<int, int>>());
                connect(h, &GenerationHandle::prefillProgress, h, [&reads, k](int done, int total) { reads[k].append({done, total}); });
            });
            if (!cacheDir.isEmpty())
                engine.setPromptCache(cacheDir, qint64(1) << 30, 16);
            engine.openModel(model, 0, 2048);
            QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
            ApiServer server(&engine, nullptr);
            server.setPort(0);
            QVERIFY2(server.start(), qPrintable(server.errorString()));
            HttpTestClient client(server.boundPort());
            body(client);
            server.stop();
        };
        Answer reference;
        serve(QString(), [&](HttpTestClient &client) { reference = ask(client, request(true)); });
        QCOMPARE(reference.status, 200);
        QCOMPARE(reference.cached, 0);
        // With a prompt cache in `folder`: the first request (with a picture or not), which keeps
        // the system prompt, one that leaves the state in memory elsewhere, then a picture again.
        QList<std::pair<int, int>> openingReads; // the first request's, in the last keptThenPicture
        const auto keptThenPicture = [&](const QString &folder, bool firstWithPicture) {
            std::pair<Answer, Answer> answers;
            serve(folder, [&](HttpTestClient &client) {
                answers.first = ask(client, request(firstWithPicture));
                openingReads = reads.value(0);
                QCOMPARE(QDir(folder).entryList({QStringLiteral("*.state")}, QDir::Files).size(), 1);
                client.post(QStringLiteral("/v1/chat/completions"),
                            QJsonObject{{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Something else"}}}},
                                        {"max_tokens", 2}}); // the state in memory no longer starts with it
                answers.second = ask(client, request(true));
            });
            return answers;
        };
        const auto [first, second] = keptThenPicture(dir.filePath(QStringLiteral("prompt-cache")), false);
        QCOMPARE(first.status, 200);
        QCOMPARE(second.status, 200);
        QVERIFY2(second.cached > 16, qPrintable(QString::number(second.cached)));
        QCOMPARE(second.content, reference.content); // the same logits as a fresh read: greedy agrees

        // A first chat that opens with a picture keeps its system prompt on the way (read first,
        // kept, then the picture and the question), and the next one reads only the picture part.
        const auto [opening, again] = keptThenPicture(dir.filePath(QStringLiteral("prompt-cache-2")), true);
        QCOMPARE(opening.status, 200);
        QCOMPARE(opening.cached, 0);
        QCOMPARE(opening.content, reference.content); // read in two parts, as one read
        // ... and its progress counts them as one read: one total from the first report on,
        // the picture's positions included, reached at the end.
        const QList<std::pair<int, int>> read = openingReads;
        QVERIFY(read.size() >= 2);
        for (const auto &[done, total] : read)
            QVERIFY2(total == read.first().second && done <= total,
                     qPrintable(QStringLiteral("%1 of %2 after %3 of %4").arg(done).arg(total).arg(read.first().first).arg(read.first().second)));
        QCOMPARE(read.last().first, read.last().second);
        QCOMPARE(again.status, 200);
        QCOMPARE(again.cached, second.cached);
        QCOMPARE(again.content, reference.content);
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestChatVision t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_chat_vision.moc"
