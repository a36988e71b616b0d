// From a hub repository to a chat, as tst_flow goes it (HubToChatFlow), with the releases
// of the families that reason first, each a tiny `waste mktiny --arch A --hf` release in
// its own layout served by the loopback hub (gpt-oss with its compact vocabulary): DeepSeek-V3 (FP8 block-scaled weights, its
// tokenizer.json and R1's chat template: the prompt opens <think>), gpt-oss (MXFP4 experts,
// o200k_harmony, the harmony format: analysis channel, then final) and Qwen3-MoE (ChatML
// with <think>). Each is downloaded, converted (native experts where the release is
// quantised), opened in chat and asked a question. The tiny models have random weights and
// would think forever, so the chat's thinking budget cuts their thinking: the reply shows it
// collapsed, opening on a click, and the answer apart, with no markup drawn anywhere.
// Then, on the DeepSeek-V3 model, the app's API server (switched on on the Server page)
// answers a forced tool call (tool_choice "required") with a parsed tool_calls entry.
// Screenshots: <build>/screenshots/flow-<arch>-*.png.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "hubtochatflow.h"
#include "server/apiserver.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

namespace {

// What a reply must never draw: the families' markup, which only the parser may read.
const char *const kMarkup[] = {"<think>", "</think>", "<|channel|>", "<|message|>", "<|end|>", "<|start|>",
                               "<|return|>", "<|im_end|>", "<|im_start|>", "\xEF\xBD\x9C"}; // ｜ of <｜…｜>

QString markupIn(const QString &text)
{
    for (const char *m : kMarkup)
        if (text.contains(QString::fromUtf8(m)))
            return QString::fromUtf8(m);
    return {};
}

QString withoutSpace(QString s)
{
    s.removeIf([](QChar c) { return c.isSpace(); });
    return s;
}

QList<QQuickItem *> visibleNamed(QQuickWindow *window, const QString &name)
{
    QList<QQuickItem *> out;
    for (QQuickItem *i : WindowTest::itemsNamed(window->contentItem(), name))
        if (i->isVisible())
            out << i;
    return out;
}

} // namespace

class TestFlowFamilies : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("flow families test"));
        WindowTest::collectWarnings();
    }

    void fromAHubReleaseToAChat_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("repo");
        QTest::addColumn<QString>("experts"); // the Convert page's default
        QTest::newRow("deepseek-v3") << "deepseek-v3" << "tiny/DeepSeek-R1-Flow" << "native";
        QTest::newRow("gpt-oss") << "gpt-oss" << "tiny/gpt-oss-Flow" << "native";
        QTest::newRow("qwen3-moe") << "qwen3-moe" << "tiny/Qwen3-MoE-Flow" << "vq3r";
    }

    void fromAHubReleaseToAChat()
    {
        QFETCH(QString, arch);
        QFETCH(QString, repo);
        QFETCH(QString, experts);
        const QString source = m_tmp.filePath(arch + QStringLiteral("-hf"));
        waste::TinyModelOptions options;
        options.arch = arch.toStdString();
        options.seed = 3;
        // gpt-oss's release vocabulary has 201088 rows, of which the tiny tokenizer gives text
        // to about a thousand: the random model's picks would be rows without text, an empty
        // answer. The compact vocabulary keeps the harmony specials (by name) and the layout.
        options.compactVocabulary = arch == QLatin1String("gpt-oss");
        waste::makeTinyHf(source.toStdString(), options);

        HubToChatFlow flow(QStringLiteral("flow-") + arch);
        flow.publish(repo, source);
        flow.showWindow(m_tmp.filePath(arch + QStringLiteral("-models")));
        if (!QTest::currentTestFailed())
            flow.download(repo);
        if (!QTest::currentTestFailed())
            flow.convert(experts);
        if (!QTest::currentTestFailed())
            flow.openInChat();
        if (QTest::currentTestFailed())
            return;

        // Greedy first, so the reply is the same each run here; thinking cut after 4 tokens. The
        // weights are random and greedy picks can differ between SIMD levels (they agree to 1e-5),
        // so on another CPU the answer after the cut could be nothing but an end of turn: then a
        // few sampled replies are tried, and one of them must show an answer.
        ChatController *chat = flow.services()->chat.get();
        QModelIndex reply;
        QString thinking, answer;
        for (int attempt = 0; attempt < 6 && answer.trimmed().isEmpty(); ++attempt) {
            chat->newConversation();
            chat->setThinking(true);
            chat->setTemperature(attempt == 0 ? 0.0 : 1.0);
            chat->setThinkingBudget(4);
            flow.send(QStringLiteral("Hello"), 48);
            if (QTest::currentTestFailed())
                return;
            reply = chat->messages()->index(chat->messages()->rowCount() - 1);
            thinking = reply.data(MessageModel::DisplayThinkingRole).toString();
            answer = reply.data(MessageModel::DisplayTextRole).toString();
        }
        QVERIFY2(!thinking.trimmed().isEmpty(), "the reply shows no thinking");
        QVERIFY2(!answer.trimmed().isEmpty(),
                 qPrintable(QStringLiteral("the reply shows no answer; the model wrote: ")
                            + chat->messages()->at(reply.row()).raw));
        QVERIFY2(markupIn(thinking).isEmpty(), qPrintable(markupIn(thinking) + QStringLiteral(" in ") + thinking));
        QVERIFY2(markupIn(answer).isEmpty(), qPrintable(markupIn(answer) + QStringLiteral(" in ") + answer));

        // On screen: the thinking collapsed, the answer below it.
        QQuickWindow *window = flow.window();
        QList<QQuickItem *> toggles;
        QTRY_VERIFY((toggles = visibleNamed(window, QStringLiteral("thoughtToggle"))).size() == 1);
        QVERIFY(toggles.first()->property("text").toString().startsWith(QStringLiteral("▸")));
        QVERIFY(visibleNamed(window, QStringLiteral("thoughtText")).isEmpty());
        QString shown;
        for (QQuickItem *prose : visibleNamed(window, QStringLiteral("answerProse")))
            shown += prose->property("text").toString();
        // Markdown may rejoin lines: compared without whitespace.
        QVERIFY2(withoutSpace(shown).contains(withoutSpace(answer).left(8)), qPrintable(shown + QStringLiteral(" | ") + answer));
        flow.shot(QStringLiteral("6-chat"));

        // A click opens it, showing the thinking as the model wrote it.
        WindowTest::clickCentre(window, toggles.first());
        QTRY_COMPARE(visibleNamed(window, QStringLiteral("thoughtText")).size(), 1);
        QCOMPARE(visibleNamed(window, QStringLiteral("thoughtText")).first()->property("text").toString(), thinking);
        QVERIFY(toggles.first()->property("text").toString().startsWith(QStringLiteral("▾")));
        // No markup drawn anywhere on the chat page (the message's own text keeps the specials
        // the model wrote, for the next prompt; only what text items draw counts).
        for (QQuickItem *i : WindowTest::allItems(window->contentItem()))
            if (i->isVisible() && (i->inherits("QQuickText") || i->inherits("QQuickTextEdit") || i->inherits("QQuickTextInput")))
                QVERIFY2(markupIn(i->property("text").toString()).isEmpty(),
                         qPrintable(QStringLiteral("%1 %2 shows: %3")
                                        .arg(QString::fromLatin1(i->metaObject()->className()), i->objectName(),
                                             i->property("text").toString())));
        flow.shot(QStringLiteral("7-thinking-open"));

        if (arch == QLatin1String("deepseek-v3"))
            forcedToolCallThroughTheServer(flow);
        if (!QTest::currentTestFailed())
            flow.checkLibraryMarksOpenModel();
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

private:
    // The Server page's switch, then an OpenAI chat completion with tool_choice "required".
    void forcedToolCallThroughTheServer(HubToChatFlow &flow)
    {
        QQuickWindow *window = flow.window();
        ApiServer *server = flow.services()->server.get();
        server->setPort(0); // any free port: ctest runs tests side by side
        window->setProperty("currentPage", window->property("pageNames").toStringList().indexOf(QStringLiteral("Server")));
        auto *toggle = window->findChild<QQuickItem *>(QStringLiteral("serverSwitch"));
        QVERIFY(toggle);
        QTRY_VERIFY(toggle->isVisible());
        WindowTest::clickCentre(window, toggle);
        QTRY_VERIFY_WITH_TIMEOUT(server->running(), 10000);
        flow.shot(QStringLiteral("8-server"));

        const QJsonObject weather{
            {QStringLiteral("type"), QStringLiteral("function")},
            {QStringLiteral("function"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("get_weather")},
                         {QStringLiteral("parameters"),
                          QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                                      {QStringLiteral("properties"),
                                       QJsonObject{{QStringLiteral("city"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                                                                                        {QStringLiteral("maxLength"), 12}}}}},
                                      {QStringLiteral("required"), QJsonArray{QStringLiteral("city")}},
                                      {QStringLiteral("additionalProperties"), false}}}}}};
        const QJsonObject body{
            {QStringLiteral("messages"),
             QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                    {QStringLiteral("content"), QStringLiteral("Weather in Rome?")}}}},
            {QStringLiteral("tools"), QJsonArray{weather}},
            {QStringLiteral("tool_choice"), QStringLiteral("required")},
            {QStringLiteral("max_tokens"), 60},
            {QStringLiteral("temperature"), 0}};
        QNetworkAccessManager net;
        QNetworkRequest request(QUrl(QStringLiteral("http://127.0.0.1:%1/v1/chat/completions").arg(server->boundPort())));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        QNetworkReply *reply = net.post(request, QJsonDocument(body).toJson());
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 120000);
        const QByteArray bytes = reply->readAll();
        QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        reply->deleteLater();
        const QJsonObject choice = QJsonDocument::fromJson(bytes).object().value(QStringLiteral("choices")).toArray().at(0).toObject();
        QCOMPARE(choice.value(QStringLiteral("finish_reason")).toString(), QStringLiteral("tool_calls"));
        const QJsonArray calls = choice.value(QStringLiteral("message")).toObject().value(QStringLiteral("tool_calls")).toArray();
        QVERIFY2(calls.size() == 1, bytes.constData());
        const QJsonObject function = calls.at(0).toObject().value(QStringLiteral("function")).toObject();
        QCOMPARE(function.value(QStringLiteral("name")).toString(), QStringLiteral("get_weather"));
        QJsonParseError error;
        const QJsonObject arguments =
            QJsonDocument::fromJson(function.value(QStringLiteral("arguments")).toString().toUtf8(), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, bytes.constData());
        QVERIFY2(arguments.value(QStringLiteral("city")).isString() && arguments.size() == 1, bytes.constData());
        QVERIFY2(markupIn(QString::fromUtf8(bytes)).isEmpty(), bytes.constData());
        server->stop();
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestFlowFamilies t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_flow_families.moc"
