// A conversation stays tied to its model (issue 39 item 4): two tiny containers, "alpha" and
// "beta". A chat made with alpha records it; opened while beta is open, the chat page shows a
// banner offering "Open alpha" (which opens it as the Models page does), and nothing is sent
// to beta meanwhile. When alpha is gone from the computer, the banner says so and the chat goes
// on with beta only when the person chooses "Continue with beta". Through the real window
// (offscreen); any QML warning fails the test. Screenshots: build/screenshots/chat-model-*.png.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "chat/conversationstore.h"
#include "engine/enginecontroller.h"
#include "engine/generationhandle.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

class TestChatModelTie : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_alpha, m_beta;
    std::unique_ptr<StudioServices> m_services;
    std::unique_ptr<QQmlApplicationEngine> m_qml;
    QQuickWindow *m_window = nullptr;
    qint64 m_alphaChat = 0;
    QStringList m_generatedOn; // the model open when each generation was queued

    ChatController *chat() { return m_services->chat.get(); }
    EngineController *engine() { return m_services->engine.get(); }
    ConversationStore store() { return ConversationStore(m_services->settings->dataFolder() + QStringLiteral("/conversations.sqlite")); }

    bool openModel(const QString &path)
    {
        engine()->openModel(path, 0, 4096);
        return QTest::qWaitFor([&] { return engine()->state() == EngineController::Ready && engine()->modelPath() == path; }, 60000);
    }
    // Sends and waits for the answer to be saved.
    bool answer(const QString &text)
    {
        chat()->setTemperature(0);
        chat()->setMaxTokens(16);
        QSignalSpy saved(chat(), &ChatController::answerSaved);
        if (!chat()->send(text))
            return false;
        return saved.wait(120000);
    }
    bool shoot(const QString &name)
    {
        QDir().mkpath(QStringLiteral(WASTE_SCREENSHOT_DIR));
        QTest::qWait(150); // the banner lays out
        return m_window->grabWindow().save(QStringLiteral(WASTE_SCREENSHOT_DIR "/chat-model-%1.png").arg(name));
    }
    QQuickItem *item(const QString &name)
    {
        return qobject_cast<QQuickItem *>(WindowTest::findNamed(m_window, name));
    }
    QString chatSubtitle()
    {
        auto *stack = m_window->findChild<QQuickItem *>(QStringLiteral("pages"));
        QQuickItem *page = stack ? stack->childItems().value(3) : nullptr; // Chat
        return page ? page->property("subtitle").toString() : QString();
    }
    bool shown(const QString &name)
    {
        QQuickItem *i = item(name);
        return i && i->isVisible();
    }
    // Leaves the conversation and opens it again, as a person coming back to it would.
    void reopenAlphaChat()
    {
        chat()->newConversation();
        chat()->openConversation(m_alphaChat);
        QCOMPARE(chat()->currentId(), m_alphaChat);
    }

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("chat-model-tie test"));
        WindowTest::collectWarnings();
        m_alpha = m_dir.filePath(QStringLiteral("alpha"));
        m_beta = m_dir.filePath(QStringLiteral("beta"));
        waste::TinyModelOptions options;
        waste::makeTinyContainer(m_alpha.toStdString(), options);
        options.seed = 2;
        waste::makeTinyContainer(m_beta.toStdString(), options);
        m_services = StudioApplication::createServices();
        m_qml = std::make_unique<QQmlApplicationEngine>();
        m_window = WindowTest::showMainWindow(*m_qml);
        QVERIFY(m_window);
        m_window->setProperty("currentPage", 3); // Chat
        connect(engine(), &EngineController::generationQueued, this,
                [this](GenerationHandle *) { m_generatedOn << engine()->modelPath(); });
    }

    void cleanupTestCase()
    {
        m_qml.reset();
        m_services.reset();
    }

    void aConversationRecordsItsModel()
    {
        QVERIFY(openModel(m_alpha));
        chat()->newConversation();
        QVERIFY2(answer(QStringLiteral("hello alpha")), qPrintable(chat()->notice()));
        m_alphaChat = chat()->currentId();
        QVERIFY(m_alphaChat != 0);
        const Conversation stored = store().conversation(m_alphaChat);
        QCOMPARE(stored.modelPath, m_alpha);
        QCOMPARE(stored.modelName, QStringLiteral("alpha"));
        QCOMPARE(chat()->modelTie(), ChatController::TiedHere);
        QVERIFY(!shown(QStringLiteral("modelTieBanner")));
    }

    void openedWithAnotherModelItOffersItsOwn()
    {
        QVERIFY(openModel(m_beta));
        QSignalSpy tie(chat(), &ChatController::modelTieChanged);
        reopenAlphaChat();
        QVERIFY(tie.count() > 0);
        QCOMPARE(chat()->modelTie(), ChatController::OtherModel);
        QCOMPARE(chat()->tiedModelName(), QStringLiteral("alpha"));
        QTRY_VERIFY(shown(QStringLiteral("modelTieBanner")));
        const QString bannerText = item(QStringLiteral("modelTieText"))->property("text").toString();
        QVERIFY2(bannerText.contains(QLatin1String("alpha")) && bannerText.contains(QLatin1String("beta")), qPrintable(bannerText));
        QVERIFY(shown(QStringLiteral("openTiedModelButton")));
        // The page says whose chat it is, not "with" the model that happens to be open.
        QCOMPARE(chatSubtitle(), QStringLiteral("with alpha"));
        QVERIFY(shoot(QStringLiteral("other")));

        // Nothing goes to beta: not a new message, not a regenerated answer.
        const int rows = chat()->messages()->rowCount();
        const int generations = int(m_generatedOn.size());
        QVERIFY(!chat()->send(QStringLiteral("are you alpha?")));
        QVERIFY2(chat()->notice().contains(QLatin1String("alpha")), qPrintable(chat()->notice()));
        // Regenerating is refused before the answer it would replace is dropped.
        QVERIFY(!chat()->regenerate());
        QCOMPARE(chat()->messages()->rowCount(), rows);
        QVERIFY(!chat()->editAndResend(0, QStringLiteral("hello beta")));
        QCOMPARE(chat()->messages()->rowCount(), rows);
        QCOMPARE(chat()->messages()->at(0).text, QStringLiteral("hello alpha"));
        QCOMPARE(int(m_generatedOn.size()), generations);

        // "Open alpha" opens it as the Models page would (the context kept in the settings).
        WindowTest::clickCentre(m_window, item(QStringLiteral("openTiedModelButton")));
        QTRY_VERIFY_WITH_TIMEOUT(engine()->state() == EngineController::Ready && engine()->modelPath() == m_alpha, 60000);
        QCOMPARE(engine()->contextTokens(), m_services->settings->contextTokens());
        QCOMPARE(chat()->modelTie(), ChatController::TiedHere);
        QTRY_VERIFY(!shown(QStringLiteral("modelTieBanner")));
        QCOMPARE(chatSubtitle(), QStringLiteral("with alpha"));
        QVERIFY2(answer(QStringLiteral("are you alpha?")), qPrintable(chat()->notice()));
        QCOMPARE(m_generatedOn.last(), m_alpha);
    }

    void aModelGoneIsSaidSoAndReplacedOnlyWhenChosen()
    {
        QVERIFY(openModel(m_beta));
        QVERIFY(QDir(m_alpha).removeRecursively());
        reopenAlphaChat();
        QCOMPARE(chat()->modelTie(), ChatController::ModelGone);
        QTRY_VERIFY(shown(QStringLiteral("modelTieBanner")));
        const QString bannerText = item(QStringLiteral("modelTieText"))->property("text").toString();
        QVERIFY2(bannerText.contains(QLatin1String("no longer")), qPrintable(bannerText));
        QVERIFY(!shown(QStringLiteral("openTiedModelButton")));
        QVERIFY(shown(QStringLiteral("continueWithOpenModelButton")));
        QVERIFY(shoot(QStringLiteral("gone")));
        const int generations = int(m_generatedOn.size());
        QVERIFY(!chat()->send(QStringLiteral("still there?")));
        QVERIFY2(chat()->notice().contains(QLatin1String("no longer")), qPrintable(chat()->notice()));
        QCOMPARE(int(m_generatedOn.size()), generations);

        WindowTest::clickCentre(m_window, item(QStringLiteral("continueWithOpenModelButton")));
        QTRY_COMPARE(chat()->modelTie(), ChatController::TiedHere);
        QTRY_VERIFY(!shown(QStringLiteral("modelTieBanner")));
        QCOMPARE(store().conversation(m_alphaChat).modelPath, m_beta);
        QCOMPARE(chat()->tiedModelName(), QStringLiteral("beta"));
        QCOMPARE(chatSubtitle(), QStringLiteral("with beta"));
        QVERIFY2(answer(QStringLiteral("still there?")), qPrintable(chat()->notice()));
        QCOMPARE(m_generatedOn.last(), m_beta);
    }

    // Conversations stored before they kept their model are tied to the one that answers next.
    void anOlderConversationIsTiedOnItsNextAnswer()
    {
        qint64 id = 0;
        {
            ConversationStore s = store();
            id = s.createConversation(QStringLiteral("from before"), {}).id;
            ChatMessage m;
            m.role = QStringLiteral("user");
            m.text = QStringLiteral("an old question");
            s.saveMessage(id, m);
        }
        chat()->newConversation();
        chat()->openConversation(id);
        QCOMPARE(chat()->modelTie(), ChatController::TiedHere);
        QVERIFY2(answer(QStringLiteral("and a new one")), qPrintable(chat()->notice()));
        QCOMPARE(store().conversation(id).modelPath, m_beta);
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestChatModelTie test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_chat_model_tie.moc"
