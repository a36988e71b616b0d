// MCP in the chat, through the real window (offscreen): the reference MCP server from npm
// (@modelcontextprotocol/server-everything, run through mcp_everything.sh) is added in
// Settings, a broken one beside it says why it failed, and both are kept in the settings. A
// tiny K3 model (`waste mktiny --k3`) is made to call the server's echo tool by constrained
// decoding (the chat's tool choice), greedy, so every run is the same: the chat shows the call
// and its arguments and waits; "Run once" runs it on the server, the result shows collapsed and
// the answer goes on with it. "Always for this tool" stops the asking; "Deny" tells the model;
// a server that hangs times out with a clear message and the conversation keeps everything.
// Screenshots (build/screenshots/mcp-*.png), light and dark, of a call awaiting approval and
// of its result. Any QML warning fails the test.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "chat/conversationstore.h"
#include "engine/enginecontroller.h"
#include "engine/generationhandle.h"
#include "mcp/mcpclient.h"
#include "mcp/mcphub.h"
#include "mcp/mcpserverconfig.h"
#include "mcp/mcpstdiotransport.h"
#include "settings/appsettings.h"
#include "units/units.h"
#include "windowtest.h"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <functional>

namespace {

// The visible item of that name on the chat page's last rows (delegates are not QObject
// children of the list), once the view has laid it out (waits up to `ms`).
QQuickItem *visibleItem(QQuickWindow *window, const QString &name, int ms = 5000)
{
    QQuickItem *found = nullptr;
    (void)QTest::qWaitFor([&] { // not found in time: null, which the caller checks
        for (QQuickItem *item : WindowTest::itemsNamed(window->contentItem(), name))
            if (item->isVisible())
                found = item; // the last one: the newest row
        return found != nullptr;
    }, ms);
    return found;
}

// How long one answer may take: generous, so that a loaded CI machine cannot fail the test.
constexpr int kAnswerMs = 240000;

QString scriptPath()
{
    return qEnvironmentVariable("WASTE_MCP_EVERYTHING");
}

} // namespace

class TestChatMcp : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_model;
    std::unique_ptr<StudioServices> m_services;
    std::unique_ptr<QQmlApplicationEngine> m_qml;
    QQuickWindow *m_window = nullptr;
    QList<GenerationResult> m_results;

    ChatController *chat() { return m_services->chat.get(); }
    McpHub *hub() { return m_services->mcp.get(); }
    MessageModel *messages() { return chat()->messages(); }
    QJsonObject toolOf(int row) { return messages()->at(row).tool; }
    QString statusOf(int row) { return messages()->at(row).toolStatus(); }

    bool shoot(const QString &name)
    {
        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        QTest::qWait(200); // the list follows its end, the card lays out
        return m_window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/mcp-%1.png").arg(name));
    }
    bool shootBothThemes(const QString &name)
    {
        bool ok = true;
        for (const QString theme : {QStringLiteral("light"), QStringLiteral("dark")}) {
            m_services->settings->setTheme(theme);
            ok = shoot(name + QLatin1Char('-') + theme) && ok;
        }
        m_services->settings->setTheme(QStringLiteral("light"));
        return ok;
    }
    // Sends a message with the echo tool forced and waits for the call it makes. `maxTokens`:
    // room for a K3 call element on the byte-level tiny vocabulary by default.
    void sendForcingEcho(const QString &text, int *toolRow, int maxTokens = 100)
    {
        const int before = messages()->rowCount();
        // Settings are the conversation's (a new one starts from the defaults).
        chat()->setTemperature(0); // greedy: the same call every run
        chat()->setMaxTokens(maxTokens);
        chat()->setThinking(false);
        chat()->setToolChoice(QStringLiteral("echo"));
        QVERIFY2(chat()->send(text), qPrintable(chat()->notice()));
        // user, answer with the call, the tool message. The first send reads the ~4,200 tokens of
        // tool declarations: seconds on a quiet machine, over a minute on two loaded cores.
        (void)QTest::qWaitFor([&] { return messages()->rowCount() == before + 3 || (!chat()->generating() && !chat()->toolPending()); }, kAnswerMs);
        *toolRow = before + 2;
        const ChatMessage answer = messages()->at(before + 1);
        QVERIFY2(messages()->rowCount() == before + 3,
                 qPrintable(QStringLiteral("no call: answer '%1' raw '%2' error '%3' finish '%4'")
                                .arg(answer.text, answer.raw, answer.error, answer.finishReason)));
        QCOMPARE(answer.role, QStringLiteral("assistant"));
        QCOMPARE(int(answer.toolCalls().size()), 1);
        QCOMPARE(answer.error, QString());
        QCOMPARE(messages()->at(*toolRow).role, QStringLiteral("tool"));
        QCOMPARE(toolOf(*toolRow).value("name").toString(), QStringLiteral("echo"));
        QCOMPARE(toolOf(*toolRow).value("server").toString(), QStringLiteral("everything"));
        const QJsonDocument args = QJsonDocument::fromJson(toolOf(*toolRow).value("arguments").toString().toUtf8());
        QVERIFY2(args.isObject() && args.object().value("message").isString(),
                 qPrintable(toolOf(*toolRow).value("arguments").toString()));
    }
    // Scrolls the chat so that row `row` is all in view (a long answer after it may have
    // pushed it out, or the view not yet followed a card that grew).
    void showRow(int row)
    {
        auto *list = m_window->findChild<QQuickItem *>(QStringLiteral("messageList"));
        QVERIFY(list);
        QTest::qWait(100);
        QVERIFY(QMetaObject::invokeMethod(list, "positionViewAtIndex", Q_ARG(int, row), Q_ARG(int, 4 /* Contain */)));
        QTest::qWait(150);
    }
    ConversationStore store()
    {
        return ConversationStore(m_services->settings->dataFolder() + QStringLiteral("/conversations.sqlite"));
    }
    QVariantMap serverRow(const QString &name)
    {
        for (const QVariant &v : chat()->toolServers())
            if (v.toMap().value(QStringLiteral("name")).toString() == name)
                return v.toMap();
        return {};
    }
    // The meter's count once a change of the offer has been counted: the count moves the way
    // `grows` says (the meter and the tools' cost both answer later, on the engine thread).
    int usedAfter(const std::function<void()> &change, bool grows)
    {
        const int before = chat()->contextUsed();
        change();
        (void)QTest::qWaitFor([&] { return grows ? chat()->contextUsed() > before : chat()->contextUsed() < before; }, 15000);
        (void)QTest::qWaitFor([&] { return serverRow(QStringLiteral("everything")).value(QStringLiteral("tokens")).toInt() >= 0; }, 15000);
        return chat()->contextUsed();
    }
    // The meter's count once what is queued has been counted (nothing known to change it).
    int usedOnceSettled()
    {
        QTest::qWait(500); // past the meter's pause; the counts are quick on the tiny model
        (void)QTest::qWaitFor([&] { return serverRow(QStringLiteral("everything")).value(QStringLiteral("tokens")).toInt() >= 0; }, 15000);
        return chat()->contextUsed();
    }
    QString echoedMessage(int row)
    {
        return QJsonDocument::fromJson(toolOf(row).value("arguments").toString().toUtf8()).object().value("message").toString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!scriptPath().isEmpty(), "WASTE_MCP_EVERYTHING is not set: run this test through ctest (mcp_everything.sh)");
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("chat-mcp test"));
        WindowTest::collectWarnings();
        const QString model = m_model = m_dir.filePath(QStringLiteral("tiny-k3"));
        waste::TinyModelOptions options;
        options.k3 = true;
        waste::makeTinyContainer(model.toStdString(), options);

        m_services = StudioApplication::createServices();
        m_qml = std::make_unique<QQmlApplicationEngine>();
        m_window = WindowTest::showMainWindow(*m_qml);
        QVERIFY(m_window);
        m_services->settings->setTheme(QStringLiteral("light"));
        EngineController *engine = m_services->engine.get();
        // The server's tools, declared in the prompt, take ~4,200 tokens of the tiny byte-level vocabulary.
        engine->openModel(model, 0, 16384);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        connect(engine, &EngineController::generationQueued, this, [this](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [this](const GenerationResult &r) { m_results << r; });
        });
    }

    void cleanupTestCase()
    {
        m_qml.reset();
        m_services.reset();
    }

    void serversAreAddedInSettings()
    {
        QCOMPARE(hub()->servers().size(), 0);
        QTest::keyClick(m_window, Qt::Key_Comma, Qt::ControlModifier);
        QObject *settings = WindowTest::findNamed(m_window, QStringLiteral("settingsDialog"));
        QVERIFY(settings);
        QTRY_VERIFY(settings->property("opened").toBool());
        auto *manage = qobject_cast<QQuickItem *>(WindowTest::findNamed(settings, QStringLiteral("mcpManageButton")));
        QVERIFY(manage);
        WindowTest::clickCentre(m_window, manage);
        QObject *dialog = WindowTest::findNamed(m_window, QStringLiteral("mcpServersDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->property("opened").toBool());

        const auto add = [&](const QString &name, const QString &command) {
            auto *nameField = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("mcpNameField")));
            auto *address = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("mcpAddressField")));
            auto *addButton = qobject_cast<QQuickItem *>(WindowTest::findNamed(dialog, QStringLiteral("mcpAddButton")));
            QVERIFY(nameField && address && addButton);
            WindowTest::clickCentre(m_window, nameField);
            QTRY_VERIFY(nameField->hasActiveFocus());
            WindowTest::typeText(m_window, name);
            WindowTest::clickCentre(m_window, address);
            QTRY_VERIFY(address->hasActiveFocus());
            WindowTest::typeText(m_window, command);
            QCOMPARE(address->property("text").toString(), command);
            WindowTest::clickCentre(m_window, addButton);
            auto *problem = WindowTest::findNamed(dialog, QStringLiteral("mcpProblem"));
            QVERIFY(problem);
            QCOMPARE(problem->property("text").toString(), QString());
        };
        add(QStringLiteral("everything"), QStringLiteral("node \"%1\" stdio").arg(scriptPath()));
        add(QStringLiteral("broken"), QStringLiteral("/nonexistent/waste-test-mcp-server --stdio"));
        QCOMPARE(hub()->servers().size(), 2);

        // The real one lists its tools; the broken one says why it is not connected.
        const auto state = [&](int i, const QString &key) { return hub()->servers().at(i).toMap().value(key).toString(); };
        QTRY_COMPARE_WITH_TIMEOUT(state(0, QStringLiteral("state")), QStringLiteral("ready"), 30000);
        QVERIFY(hub()->toolNames().contains(QStringLiteral("echo")));
        QVERIFY(hub()->servers().at(0).toMap().value(QStringLiteral("tools")).toInt() >= 3);
        QTRY_COMPARE_WITH_TIMEOUT(state(1, QStringLiteral("state")), QStringLiteral("failed"), 30000);
        QVERIFY2(state(1, QStringLiteral("message")).contains(QLatin1String("waste-test-mcp-server")),
                 qPrintable(state(1, QStringLiteral("message"))));
        QTest::qWait(100);
        bool shownFailed = false;
        for (QQuickItem *label : WindowTest::itemsNamed(m_window->contentItem(), QStringLiteral("mcpServerState")))
            shownFailed = shownFailed || label->property("text").toString().startsWith(QLatin1String("Not connected: "));
        QVERIFY(shownFailed);
        QVERIFY(shoot(QStringLiteral("settings")));

        // A name already taken is refused, saying so.
        QVERIFY(hub()->addStdioServer(QStringLiteral("everything"), QStringLiteral("node x")).contains(QLatin1String("already")));
        // Kept in the settings, in order.
        {
            const QList<McpServerConfig> kept = McpServerConfig::load(QSettings());
            QCOMPARE(kept.size(), 2);
            QCOMPARE(kept.at(0).name, QStringLiteral("everything"));
            QCOMPARE(kept.at(0).program, QStringLiteral("node"));
            QCOMPARE(kept.at(0).arguments, (QStringList{scriptPath(), QStringLiteral("stdio")}));
        }

        // Remove the broken one with its button.
        QQuickItem *remove = nullptr; // the lowest row's: "broken"
        for (QQuickItem *b : WindowTest::itemsNamed(m_window->contentItem(), QStringLiteral("mcpRemoveButton")))
            if (b->isVisible() && (!remove || b->mapToScene({}).y() > remove->mapToScene({}).y()))
                remove = b;
        QVERIFY(remove);
        WindowTest::clickCentre(m_window, remove);
        QTRY_COMPARE(hub()->servers().size(), 1);
        QCOMPARE(McpServerConfig::load(QSettings()).size(), 1);
        QTest::keyClick(m_window, Qt::Key_Escape);
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QTest::keyClick(m_window, Qt::Key_Escape);
        QTRY_VERIFY(!settings->property("visible").toBool());
    }

    // The offered declarations are rendered into the prompt, so the context meter counts
    // them: server-everything's come to thousands of tokens, which the meter showed as
    // nothing (the template alone) before.
    void theContextMeterCountsOfferedTools()
    {
        // Waited for by the count itself: contextChanged also says the tools' cost changed.
        usedOnceSettled();
        const int without = usedAfter([&] { chat()->setToolChoice(QStringLiteral("none")); }, false);
        const int with = usedAfter([&] { chat()->setToolChoice(QStringLiteral("auto")); }, true);
        QVERIFY2(without > 0 && with > without + 1000,
                 qPrintable(QStringLiteral("%1 tokens without the tools, %2 with them").arg(without).arg(with)));
    }

    // What the tools cost is shown per server: counted by the engine's own rendering (the chat's
    // empty prompt with and without the server's tools), so it is exactly what the meter's count
    // grows by; the meter's explanation names the tools and the server, not the template.
    void theToolsCostIsShownPerServer()
    {
        chat()->newConversation();
        m_window->setProperty("currentPage", 3); // Chat
        chat()->setToolChoice(QStringLiteral("auto"));
        usedOnceSettled();
        const int without = usedAfter([&] { chat()->setToolChoice(QStringLiteral("none")); }, false);
        QCOMPARE(chat()->toolTokens(), 0); // "none" offers no declarations
        const int with = usedAfter([&] { chat()->setToolChoice(QStringLiteral("auto")); }, true);
        QTRY_VERIFY_WITH_TIMEOUT(chat()->toolTokens() > 1000, 15000);
        QCOMPARE(chat()->toolTokens(), with - without);
        QCOMPARE(chat()->toolServers().size(), 1);
        const QVariantMap everything = serverRow(QStringLiteral("everything"));
        QCOMPARE(everything.value(QStringLiteral("tokens")).toInt(), chat()->toolTokens());
        QCOMPARE(everything.value(QStringLiteral("tools")).toInt(), int(hub()->toolNames().size()));
        QCOMPARE(everything.value(QStringLiteral("offeredTools")).toInt(), int(hub()->toolNames().size()));
        const QString note = chat()->contextNote();
        QVERIFY2(note.contains(QLatin1String("tools this chat offers")) && note.contains(QLatin1String("everything"))
                     && note.contains(QLocale().toString(chat()->toolTokens())),
                 qPrintable(note));

        // The Tools panel shows the server with its cost.
        auto *button = qobject_cast<QQuickItem *>(WindowTest::findNamed(m_window, QStringLiteral("chatToolsButton")));
        QVERIFY(button);
        QTRY_VERIFY(button->isVisible());
        WindowTest::clickCentre(m_window, button);
        QObject *panel = WindowTest::findNamed(m_window, QStringLiteral("chatToolsPanel"));
        QVERIFY(panel);
        QTRY_VERIFY(panel->property("opened").toBool());
        QQuickItem *cost = visibleItem(m_window, QStringLiteral("toolServerCost"));
        QVERIFY(cost);
        QVERIFY2(cost->property("text").toString().contains(QLocale().toString(chat()->toolTokens())),
                 qPrintable(cost->property("text").toString()));
        // Its tools, each with its own switch: one turned off there is off in this chat.
        QQuickItem *expand = visibleItem(m_window, QStringLiteral("toolServerExpand"));
        QVERIFY(expand);
        WindowTest::clickCentre(m_window, expand);
        QTRY_COMPARE(int(WindowTest::itemsNamed(m_window->contentItem(), QStringLiteral("toolSwitch")).size()),
                     everything.value(QStringLiteral("tools")).toInt());
        QVERIFY(shoot(QStringLiteral("tools-panel-light")));
        QQuickItem *first = WindowTest::itemsNamed(m_window->contentItem(), QStringLiteral("toolSwitch")).value(0);
        QVERIFY(first && first->isVisible());
        const QString firstTool = first->property("text").toString(); // the rows are made anew on a change
        WindowTest::clickCentre(m_window, first);
        QTRY_COMPARE(serverRow(QStringLiteral("everything")).value(QStringLiteral("offeredTools")).toInt(),
                     everything.value(QStringLiteral("tools")).toInt() - 1);
        QTRY_VERIFY_WITH_TIMEOUT(chat()->toolTokens() > 0 && chat()->toolTokens() < with - without, 15000);
        chat()->setToolOffered(QStringLiteral("everything"), firstTool, true);
        QTRY_COMPARE_WITH_TIMEOUT(chat()->toolTokens(), with - without, 15000);
        QTest::keyClick(m_window, Qt::Key_Escape);
        QTRY_VERIFY(!panel->property("visible").toBool());
    }

    void callAwaitsApprovalThenRunsAndTheAnswerGoesOn()
    {
        m_window->setProperty("currentPage", 3); // Chat
        chat()->newConversation();
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        m_results.clear();
        int row = 0;
        sendForcingEcho(QStringLiteral("Please echo a greeting."), &row);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(statusOf(row), QStringLiteral("awaiting"));
        QVERIFY(chat()->toolPending());
        QCOMPARE(saved.count(), 1);
        // Nothing else can be sent while it waits.
        QVERIFY(!chat()->send(QStringLiteral("another question")));
        QVERIFY(chat()->notice().contains(QLatin1String("tool call")));
        chat()->clearNotice();

        QTRY_VERIFY2(visibleItem(m_window, QStringLiteral("toolRunOnce")), qPrintable(WindowTest::warnings()));
        QQuickItem *once = visibleItem(m_window, QStringLiteral("toolRunOnce"));
        QVERIFY(visibleItem(m_window, QStringLiteral("toolRunAlways")));
        QVERIFY(visibleItem(m_window, QStringLiteral("toolDeny")));
        QQuickItem *args = visibleItem(m_window, QStringLiteral("toolArguments"));
        QVERIFY(args);
        QVERIFY2(args->property("text").toString().contains(QLatin1String("\"message\"")), qPrintable(args->property("text").toString()));
        showRow(row);
        // The answer that only made the call has no text: its figures show, no Copy.
        QCOMPARE(messages()->at(row - 1).text, QString());
        QVERIFY(!visibleItem(m_window, QStringLiteral("answerCopy"), 300));
        QVERIFY(visibleItem(m_window, QStringLiteral("userCopy")));
        QVERIFY(shootBothThemes(QStringLiteral("approval")));

        showRow(row);
        once = visibleItem(m_window, QStringLiteral("toolRunOnce"));
        WindowTest::clickCentre(m_window, once);
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(row), QStringLiteral("done"), 30000);
        QCOMPARE(messages()->at(row).text, QStringLiteral("Echo: ") + echoedMessage(row));
        // The answer goes on after the result, unforced.
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);
        QCOMPARE(messages()->rowCount(), row + 2);
        const ChatMessage after = messages()->at(row + 1);
        QCOMPARE(after.role, QStringLiteral("assistant"));
        QCOMPARE(after.error, QString());
        QVERIFY(!chat()->toolPending());
        // The second prompt holds the first one, the call and the result.
        QCOMPARE(m_results.size(), 2);
        QVERIFY2(m_results.at(1).stats.promptTokens > m_results.at(0).stats.promptTokens + int(m_results.at(0).tokens.size()),
                 qPrintable(QStringLiteral("%1 vs %2 + %3").arg(m_results.at(1).stats.promptTokens)
                                .arg(m_results.at(0).stats.promptTokens).arg(m_results.at(0).tokens.size())));

        // The result, collapsed; opened with its toggle.
        showRow(row);
        QVERIFY(!visibleItem(m_window, QStringLiteral("toolResult"), 300));
        QVERIFY(shootBothThemes(QStringLiteral("result")));
        QQuickItem *toggle = visibleItem(m_window, QStringLiteral("toolResultToggle"));
        QVERIFY(toggle);
        WindowTest::clickCentre(m_window, toggle);
        QTRY_VERIFY(visibleItem(m_window, QStringLiteral("toolResult")));
        QCOMPARE(visibleItem(m_window, QStringLiteral("toolResult"))->property("text").toString(), messages()->at(row).text.trimmed());
        QVERIFY(shootBothThemes(QStringLiteral("result-open")));

        // Reopened from the store: the call, its status and result are kept.
        const qint64 id = chat()->currentId();
        chat()->newConversation();
        chat()->openConversation(id);
        QCOMPARE(messages()->rowCount(), row + 2);
        QCOMPARE(statusOf(row), QStringLiteral("done"));
        QCOMPARE(messages()->at(row).text, QStringLiteral("Echo: ") + echoedMessage(row));
        QCOMPARE(int(messages()->at(row - 1).toolCalls().size()), 1);
    }

    void denyTellsTheModel()
    {
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        int row = 0;
        sendForcingEcho(QStringLiteral("Echo this, please."), &row);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(statusOf(row), QStringLiteral("awaiting"));
        showRow(row);
        QQuickItem *deny = visibleItem(m_window, QStringLiteral("toolDeny"));
        QVERIFY(deny);
        WindowTest::clickCentre(m_window, deny);
        QCOMPARE(statusOf(row), QStringLiteral("denied"));
        QVERIFY(messages()->at(row).text.contains(QLatin1String("declined")));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);
        QCOMPARE(messages()->at(row + 1).role, QStringLiteral("assistant"));
    }

    // A chat chooses its servers and tools: the choice is kept with the conversation, the
    // prompt declares only those (the meter's count, the same rendering, shrinks by them) and
    // the tool loop runs no call of a tool the chat has turned off.
    void aChatChoosesItsTools()
    {
        chat()->newConversation();
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        int row = 0;
        sendForcingEcho(QStringLiteral("Echo something."), &row);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(statusOf(row), QStringLiteral("awaiting"));
        const qint64 id = chat()->currentId();
        const int all = int(hub()->toolNames().size());

        // echo off in this chat: the prompt declares the others (the choice "auto": a forced
        // echo would offer nothing once echo is off), the waiting call is refused, saying why,
        // and the answer goes on.
        chat()->setToolChoice(QStringLiteral("auto"));
        const int withEcho = usedOnceSettled();
        const int withoutEcho =
            usedAfter([&] { chat()->setToolOffered(QStringLiteral("everything"), QStringLiteral("echo"), false); }, false);
        QCOMPARE(serverRow(QStringLiteral("everything")).value(QStringLiteral("offeredTools")).toInt(), all - 1);
        QVERIFY2(withoutEcho < withEcho && withoutEcho > withEcho - 1000,
                 qPrintable(QStringLiteral("%1 vs %2").arg(withoutEcho).arg(withEcho)));
        QVERIFY(chat()->answerToolCall(row, QStringLiteral("once")));
        QCOMPARE(statusOf(row), QStringLiteral("failed"));
        QVERIFY2(messages()->at(row).text.contains(QLatin1String("does not offer echo")), qPrintable(messages()->at(row).text));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);

        // Kept with the conversation: a new chat offers everything, this one again without echo.
        const McpToolSelection kept = store().conversation(id).settings.tools;
        QCOMPARE(kept.offTools.value(QStringLiteral("everything")), QStringList{QStringLiteral("echo")});
        chat()->newConversation();
        QCOMPARE(serverRow(QStringLiteral("everything")).value(QStringLiteral("offeredTools")).toInt(), all);
        chat()->openConversation(id);
        QCOMPARE(serverRow(QStringLiteral("everything")).value(QStringLiteral("offeredTools")).toInt(), all - 1);

        // The whole server off: the prompt declares no tool, the meter counts the bare chat.
        const int serverOn = usedOnceSettled();
        const int serverOff = usedAfter([&] { chat()->setServerOffered(QStringLiteral("everything"), false); }, false);
        QTRY_COMPARE_WITH_TIMEOUT(chat()->toolTokens(), 0, 15000);
        QVERIFY(store().conversation(id).settings.tools.offServers.contains(QStringLiteral("everything")));
        QVERIFY2(serverOff < serverOn - 1000, qPrintable(QStringLiteral("%1 vs %2").arg(serverOff).arg(serverOn)));
        // Its cost still says what turning it on would add.
        QVERIFY(serverRow(QStringLiteral("everything")).value(QStringLiteral("tokens")).toInt() > 1000);
        chat()->newConversation(); // the next tests force echo in a chat that offers it
    }

    void alwaysForThisToolStopsTheAsking()
    {
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        int row = 0;
        sendForcingEcho(QStringLiteral("Echo once more."), &row);
        if (QTest::currentTestFailed())
            return;
        showRow(row);
        QQuickItem *always = visibleItem(m_window, QStringLiteral("toolRunAlways"));
        QVERIFY(always);
        WindowTest::clickCentre(m_window, always);
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(row), QStringLiteral("done"), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);
        QVERIFY(hub()->alwaysAllowed(QStringLiteral("everything"), QStringLiteral("echo")));

        // The next call runs without a question.
        sendForcingEcho(QStringLiteral("And again."), &row);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(statusOf(row) != QLatin1String("awaiting"));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(row), QStringLiteral("done"), 30000);
        QCOMPARE(messages()->at(row).text, QStringLiteral("Echo: ") + echoedMessage(row));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 4, kAnswerMs);
    }

    void aHangingServerTimesOutAndLosesNothing()
    {
        // The server stops answering (its process paused): the call times out, says so, and
        // the answer goes on; every message stays.
        auto *transport = qobject_cast<McpStdioTransport *>(hub()->client(QStringLiteral("everything"))->transport());
        QVERIFY(transport);
        const qint64 pid = transport->processId();
        QVERIFY(pid > 0);
        hub()->setRequestTimeout(1500);
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        QCOMPARE(::kill(pid_t(pid), SIGSTOP), 0);
        int row = 0;
        sendForcingEcho(QStringLiteral("Echo while the server sleeps."), &row); // echo runs without asking now
        if (QTest::currentTestFailed()) {
            ::kill(pid_t(pid), SIGCONT);
            return;
        }
        // From the call on (the answer's own time before it does not count): the 1,500 ms limit ends
        // the wait, where the stopped server would hold it forever.
        QElapsedTimer clock;
        clock.start();
        const int rowsBefore = messages()->rowCount();
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(row), QStringLiteral("failed"), 15000);
        ::kill(pid_t(pid), SIGCONT);
        QVERIFY(clock.elapsed() < 20000);
        QVERIFY2(messages()->at(row).error.contains(QLatin1String("1500 ms")), qPrintable(messages()->at(row).error));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);
        QCOMPARE(messages()->rowCount(), rowsBefore + 1);
        showRow(row);
        QVERIFY(shoot(QStringLiteral("timeout-light")));
        hub()->setRequestTimeout(30000);

        const qint64 id = chat()->currentId();
        chat()->newConversation();
        chat()->openConversation(id);
        QCOMPARE(messages()->rowCount(), rowsBefore + 1);
        QCOMPARE(statusOf(row), QStringLiteral("failed"));
    }

    // The tool list is read once, not in every new chat (issue 39 item 3): a new chat's
    // prompt starts with what every chat with these tools starts with, whose state the engine
    // keeps (the session's own when it read it last, the prompt cache on disk otherwise), so a
    // second new chat reads only its own question.
    void aNewChatDoesNotReadTheToolsAgain()
    {
        m_window->setProperty("currentPage", 3); // Chat
        QTRY_VERIFY_WITH_TIMEOUT(chat()->toolTokens() > 1000, 15000);
        const int tools = chat()->toolTokens();
        QList<GenerationResult> results;
        for (const QString &question : {QStringLiteral("A first new chat."), QStringLiteral("A second new chat.")}) {
            chat()->newConversation();
            chat()->setTemperature(0);
            chat()->setMaxTokens(1);
            chat()->setThinking(false);
            chat()->setToolChoice(QStringLiteral("auto"));
            m_results.clear();
            QVERIFY2(chat()->send(question), qPrintable(chat()->notice()));
            QTRY_VERIFY_WITH_TIMEOUT(!m_results.isEmpty() && !chat()->generating(), kAnswerMs);
            results << m_results.first();
        }
        const GenerationStats second = results.at(1).stats;
        QVERIFY2(second.reusedTokens >= tools,
                 qPrintable(QStringLiteral("the second new chat reused %1 of %2 prompt tokens; the tools take %3")
                                .arg(second.reusedTokens)
                                .arg(second.promptTokens)
                                .arg(tools)));
    }

    // At a 4,096-token context server-everything's tools leave no room (the issue's "4,428 /
    // 4,096 · the chat template's own tokens"): the meter names the tools and the server as the
    // cause and offers the ways out, turning them off for this chat or a larger context with
    // the RAM it takes by the engine's planner; sending says the same and stores nothing.
    void toolsThatDoNotFitSayWhyAndOfferTheWaysOut()
    {
        chat()->newConversation();
        m_window->setProperty("currentPage", 3); // Chat
        EngineController *engine = m_services->engine.get();
        engine->openModel(m_model, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(chat()->toolsDoNotFit(), 15000);
        const int larger = chat()->largerContext();
        QVERIFY2(larger > 4096, qPrintable(QString::number(larger)));
        const std::string path = QFileInfo(m_model).absoluteFilePath().toStdString();
        const qint64 extra = waste::planMemory(path, larger).floor_bytes - waste::planMemory(path, 4096).floor_bytes;
        QVERIFY(extra > 0);
        const QString warning = chat()->contextWarning();
        for (const QString &part : {QStringLiteral("tools this chat offers"), QStringLiteral("everything"),
                                    QLocale().toString(chat()->toolTokens()), QLocale().toString(4096),
                                    QStringLiteral("Turn servers or tools off"), QLocale().toString(larger),
                                    Units::bytes(extra)})
            QVERIFY2(warning.contains(part), qPrintable(QStringLiteral("'%1' not in: %2").arg(part, warning)));
        QVERIFY2(!warning.contains(QLatin1String("Start a new chat")), qPrintable(warning));
        QVERIFY2(!chat()->contextNote().contains(QLatin1String("template's own tokens")), qPrintable(chat()->contextNote()));

        // Sending says why and keeps the message out of the store.
        // The notice points at the warning instead of repeating it.
        QVERIFY(!chat()->send(QStringLiteral("hello")));
        QVERIFY2(chat()->notice().startsWith(QLatin1String("Not sent")), qPrintable(chat()->notice()));
        QVERIFY2(chat()->notice().contains(QLatin1String("tools this chat offers")), qPrintable(chat()->notice()));
        QVERIFY(chat()->notice() != warning);
        QVERIFY(!warning.contains(chat()->notice()));
        QCOMPARE(messages()->rowCount(), 0);
        QCOMPARE(chat()->currentId(), 0);
        QTRY_VERIFY(visibleItem(m_window, QStringLiteral("chooseToolsButton")));
        QVERIFY(visibleItem(m_window, QStringLiteral("largerContextButton")));
        QVERIFY(shootBothThemes(QStringLiteral("tools-do-not-fit")));
        chat()->clearNotice();

        // Way out one: the server off for this chat.
        chat()->setServerOffered(QStringLiteral("everything"), false);
        QTRY_VERIFY_WITH_TIMEOUT(!chat()->toolsDoNotFit(), 15000);
        QVERIFY(!chat()->contextWarning().contains(QLatin1String("tools")));
        chat()->setServerOffered(QStringLiteral("everything"), true);
        QTRY_VERIFY_WITH_TIMEOUT(chat()->toolsDoNotFit(), 15000);

        // Way out two: the larger context, opened from its button and kept for later opens.
        WindowTest::clickCentre(m_window, visibleItem(m_window, QStringLiteral("largerContextButton")));
        QTRY_VERIFY_WITH_TIMEOUT(engine->state() == EngineController::Ready && engine->contextTokens() == larger, 30000);
        QCOMPARE(m_services->settings->contextTokens(), larger);
        QTRY_VERIFY_WITH_TIMEOUT(!chat()->toolsDoNotFit() && chat()->toolTokens() > 1000, 15000);
        QVERIFY(!visibleItem(m_window, QStringLiteral("largerContextButton"), 300));

        // No warning (WindowTest leaves out the font shaper's notes on scripts this machine's
        // fonts lack: the random model writes any character).
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    // "Start each answer with echo" on a family that writes each argument as its own element
    // (GLM-4.5: <arg_key>/<arg_value> pairs): the forced call is written, read back as a call
    // with JSON arguments, approved and run, and the answer goes on, as on K3.
    void aForcedCallOnAFormatThatWritesEachArgumentAlone()
    {
        const QString glm = m_dir.filePath(QStringLiteral("tiny-glm45"));
        waste::TinyModelOptions options;
        options.arch = "glm4-moe";
        waste::makeTinyContainer(glm.toStdString(), options);
        EngineController *engine = m_services->engine.get();
        engine->openModel(glm, 0, 16384);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        m_window->setProperty("currentPage", 3); // Chat
        chat()->newConversation();
        chat()->setServerOffered(QStringLiteral("everything"), true);
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        int row = 0;
        sendForcingEcho(QStringLiteral("Please echo a greeting."), &row, 320);
        if (QTest::currentTestFailed())
            return;
        // Written as GLM writes calls (its reply as the model wrote it), and that markup is the
        // call's, never the answer's text.
        const ChatMessage call = messages()->at(row - 1);
        QVERIFY2(call.raw.contains(QLatin1String("<arg_key>message</arg_key>")), qPrintable(call.raw));
        for (const char *markup : {"<tool_call>", "<arg_key>", "<arg_value>"})
            QVERIFY2(!call.text.contains(QLatin1String(markup)), qPrintable(call.text));
        // Asked, unless an earlier test said "always" for echo.
        QTRY_VERIFY_WITH_TIMEOUT(statusOf(row) == QStringLiteral("awaiting") || statusOf(row) == QStringLiteral("done"), 30000);
        if (statusOf(row) == QStringLiteral("awaiting"))
            QVERIFY(chat()->answerToolCall(row, QStringLiteral("once")));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(row), QStringLiteral("done"), 30000);
        QCOMPARE(messages()->at(row).text, QStringLiteral("Echo: ") + echoedMessage(row));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, kAnswerMs);
        QCOMPARE(messages()->at(row + 1).role, QStringLiteral("assistant"));
        QCOMPARE(messages()->at(row + 1).error, QString());
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestChatMcp t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_chat_mcp.moc"
