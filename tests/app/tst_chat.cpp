// The chat's parts: the SQLite store (and that it survives a restart), the list models
// under QAbstractItemModelTester, Markdown blocks, the context cut, and attachments (a PNG is
// accepted, a non-image is refused). Replies are split by the model's reply parser (tst_dialogue).
#include "chat/chatcontroller.h"
#include "chat/conversationstore.h"
#include "chat/markdownblocks.h"
#include "chat/contextcut.h"
#include "engine/enginecontroller.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtSql/QSqlDatabase>
#include <QtSql/QSqlQuery>

class TestChat : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString dbPath(const QString &name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void storeKeepsConversationsAcrossRestart()
    {
        const QString path = dbPath(QStringLiteral("restart.sqlite"));
        qint64 id = 0;
        {
            ConversationStore store(path);
            ConversationSettings s;
            s.systemPrompt = QStringLiteral("Be brief.");
            s.temperature = 0.3;
            s.maxTokens = 200;
            s.thinking = false;
            s.thinkingBudget = 300;
            s.tools.setServer(QStringLiteral("files"), false);
            s.tools.setTool(QStringLiteral("everything"), QStringLiteral("echo"), false);
            id = store.createConversation(QStringLiteral("Rust lifetimes"), s, QStringLiteral("/models/alpha"),
                                          QStringLiteral("alpha")).id;
            ChatMessage user;
            user.role = QStringLiteral("user");
            user.text = QStringLiteral("What is a lifetime?");
            user.imagePaths = {QStringLiteral("/tmp/a.png")};
            store.saveMessage(id, user);
            ChatMessage answer;
            answer.role = QStringLiteral("assistant");
            answer.text = QStringLiteral("A **region** of code.");
            answer.thinking = QStringLiteral("The user asks about Rust.");
            answer.thinkingSeconds = 12.5;
            answer.tokens = 7;
            answer.tokensPerSecond = 4.5;
            answer.hitRate = 0.61;
            answer.finishReason = QStringLiteral("stop");
            answer.raw = QStringLiteral("<think>The user asks about Rust.</think>\n\nA **region** of code.");
            answer.openedThinking = true;
            store.saveMessage(id, answer);
            store.createConversation(QStringLiteral("Other"), {});
            // No explicit save or close: everything must already be on disk.
        }
        ConversationStore reopened(path);
        const QList<Conversation> list = reopened.conversations();
        QCOMPARE(list.size(), 2);
        const Conversation c = reopened.conversation(id);
        QCOMPARE(c.title, QStringLiteral("Rust lifetimes"));
        QCOMPARE(c.settings.systemPrompt, QStringLiteral("Be brief."));
        QCOMPARE(c.settings.maxTokens, 200);
        QCOMPARE(c.settings.thinking, false);
        QCOMPARE(c.settings.thinkingBudget, 300);
        // The chat's choice of MCP servers and tools, and its model.
        QVERIFY(!c.settings.tools.offersServer(QStringLiteral("files")));
        QVERIFY(!c.settings.tools.offers(QStringLiteral("everything"), QStringLiteral("echo")));
        QVERIFY(c.settings.tools.offers(QStringLiteral("everything"), QStringLiteral("add")));
        QCOMPARE(c.modelPath, QStringLiteral("/models/alpha"));
        QCOMPARE(c.modelName, QStringLiteral("alpha"));
        reopened.setModel(id, QStringLiteral("/models/beta"), QStringLiteral("beta"));
        QCOMPARE(reopened.conversation(id).modelName, QStringLiteral("beta"));
        reopened.setSettings(id, ConversationSettings{});
        QCOMPARE(reopened.conversation(id).settings.thinkingBudget, 0);
        QCOMPARE(reopened.conversation(id).settings.tools, McpToolSelection{}); // all offered again
        const QList<ChatMessage> msgs = reopened.messages(id);
        QCOMPARE(msgs.size(), 2);
        QCOMPARE(msgs[0].imagePaths, QStringList{QStringLiteral("/tmp/a.png")});
        QCOMPARE(msgs[1].thinking, QStringLiteral("The user asks about Rust."));
        QCOMPARE(msgs[1].thinkingSeconds, 12.5);
        QCOMPARE(msgs[1].hitRate, 0.61);
        QCOMPARE(msgs[1].raw, QStringLiteral("<think>The user asks about Rust.</think>\n\nA **region** of code."));
        QCOMPARE(msgs[1].openedThinking, true);
        QCOMPARE(msgs[0].openedThinking, false);

        // Search matches titles and message text, case-insensitively; wildcards are literal.
        QCOMPARE(reopened.conversations(QStringLiteral("REGION")).size(), 1);
        QCOMPARE(reopened.conversations(QStringLiteral("lifetimes")).size(), 1);
        QCOMPARE(reopened.conversations(QStringLiteral("%")).size(), 0);
        reopened.renameConversation(id, QStringLiteral("Lifetimes"));
        QCOMPARE(reopened.conversation(id).title, QStringLiteral("Lifetimes"));
        reopened.deleteConversation(id);
        QCOMPARE(reopened.conversations().size(), 1);
        QCOMPARE(reopened.messages(id).size(), 0); // cascaded
    }

    void storeOpensADatabaseWrittenBeforeRepliesWereKeptWhole()
    {
        // The schema of the first release: no raw / opened_thinking columns.
        const QString path = dbPath(QStringLiteral("old.sqlite"));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("old"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                          " title TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL,"
                                          " system_prompt TEXT NOT NULL DEFAULT '', temperature REAL NOT NULL DEFAULT 0.7,"
                                          " top_p REAL NOT NULL DEFAULT 0.95, max_tokens INTEGER NOT NULL DEFAULT 1024,"
                                          " thinking INTEGER NOT NULL DEFAULT 1)")));
            QVERIFY(q.exec(QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                          " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                                          " role TEXT NOT NULL, content TEXT NOT NULL, thinking TEXT NOT NULL DEFAULT '',"
                                          " thinking_seconds REAL NOT NULL DEFAULT 0, images TEXT NOT NULL DEFAULT '[]',"
                                          " tokens INTEGER NOT NULL DEFAULT 0, tokens_per_second REAL NOT NULL DEFAULT 0,"
                                          " hit_rate REAL NOT NULL DEFAULT 0, finish_reason TEXT NOT NULL DEFAULT '',"
                                          " error TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL)")));
            QVERIFY(q.exec(QStringLiteral("INSERT INTO conversations (title, created, updated) VALUES ('Old', 1, 1)")));
            QVERIFY(q.exec(QStringLiteral("INSERT INTO messages (conversation_id, role, content, created)"
                                          " VALUES (1, 'assistant', 'Kept.', 1)")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("old"));
        ConversationStore store(path);
        const QList<ChatMessage> msgs = store.messages(1);
        QCOMPARE(msgs.size(), 1);
        QCOMPARE(msgs[0].text, QStringLiteral("Kept."));
        QVERIFY(msgs[0].raw.isEmpty());
        ChatMessage more = msgs[0];
        more.raw = QStringLiteral("Kept, whole.");
        store.saveMessage(1, more);
        QCOMPARE(store.messages(1).at(0).raw, QStringLiteral("Kept, whole."));
    }

    void controllerListsAndOpensStoredConversations()
    {
        const QString path = dbPath(QStringLiteral("controller.sqlite"));
        qint64 id = 0;
        {
            ConversationStore store(path);
            id = store.createConversation(QStringLiteral("Saved chat"), {}).id;
            ChatMessage m;
            m.role = QStringLiteral("user");
            m.text = QStringLiteral("hello");
            store.saveMessage(id, m);
        }
        EngineController engine(nullptr);
        ChatController chat(&engine, path, nullptr);
        QAbstractItemModelTester listTester(chat.conversations(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester messageTester(chat.messages(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(chat.conversations()->rowCount(), 1);
        chat.openConversation(id);
        QCOMPARE(chat.currentTitle(), QStringLiteral("Saved chat"));
        QCOMPARE(chat.messages()->rowCount(), 1);
        QCOMPARE(chat.messages()->data(chat.messages()->index(0), MessageModel::TextRole).toString(), QStringLiteral("hello"));

        chat.renameConversation(id, QStringLiteral("  Renamed   chat "));
        QCOMPARE(chat.currentTitle(), QStringLiteral("Renamed chat"));
        chat.setSearch(QStringLiteral("nothing like this"));
        QCOMPARE(chat.conversations()->rowCount(), 0);
        chat.setSearch(QString());
        QCOMPARE(chat.conversations()->rowCount(), 1);

        // Settings are per conversation and saved at once.
        chat.setTemperature(0.2);
        chat.setSystemPrompt(QStringLiteral("Answer in French."));
        {
            ConversationStore check(path);
            QCOMPARE(check.conversation(id).settings.systemPrompt, QStringLiteral("Answer in French."));
            QCOMPARE(check.conversation(id).settings.temperature, 0.2);
        }
        // The sampling settings keep to their ranges (temperature 0..2, top-p 0.05..1) and
        // save what they keep.
        chat.setTemperature(5.0);
        chat.setTopP(0.0);
        QCOMPARE(chat.temperature(), 2.0);
        QCOMPARE(chat.topP(), 0.05);
        chat.setTemperature(-1.0);
        chat.setTopP(0.5);
        QCOMPARE(chat.temperature(), 0.0);
        QCOMPARE(chat.topP(), 0.5);
        {
            ConversationStore check(path);
            QCOMPARE(check.conversation(id).settings.temperature, 0.0);
            QCOMPARE(check.conversation(id).settings.topP, 0.5);
        }
        chat.setTemperature(0.2);
        // So do the answer's length (16..32768 tokens) and the thinking budget (0..32768);
        // every setter saves and says so only when the value moves, and the answer's length
        // also changes what the context meter shows.
        {
            QSignalSpy changed(&chat, &ChatController::settingsChanged);
            QSignalSpy context(&chat, &ChatController::contextChanged);
            chat.setMaxTokens(1);
            QCOMPARE(chat.maxTokens(), 16);
            QCOMPARE(context.size(), 1);
            chat.setMaxTokens(16);
            chat.setThinkingBudget(-5); // 0 already
            chat.setSystemPrompt(QStringLiteral("Answer in French."));
            QCOMPARE(changed.size(), 1);
            chat.setThinkingBudget(100000);
            QCOMPARE(chat.thinkingBudget(), 32768);
            chat.setThinking(false);
            chat.setThinking(false);
            QCOMPARE(chat.thinking(), false);
            QCOMPARE(changed.size(), 3);
            QCOMPARE(context.size(), 1);
            ConversationStore check(path);
            const ConversationSettings saved = check.conversation(id).settings;
            QCOMPARE(saved.maxTokens, 16);
            QCOMPARE(saved.thinkingBudget, 32768);
            QCOMPARE(saved.thinking, false);
        }
        // Sending without a model is refused in words, and nothing is stored.
        QVERIFY(!chat.send(QStringLiteral("are you there?")));
        QVERIFY(chat.notice().contains(QStringLiteral("No model is open")));
        QCOMPARE(chat.messages()->rowCount(), 1);

        chat.deleteConversation(id);
        QCOMPARE(chat.currentId(), 0);
        QCOMPARE(chat.conversations()->rowCount(), 0);
        QCOMPARE(chat.messages()->rowCount(), 0);
    }

    void realModelConversationSurvivesRestart()
    {
        const QString path = dbPath(QStringLiteral("real.sqlite"));
        EngineController engine(nullptr);
        engine.openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
        qint64 conversation = 0;
        QString editedAnswer;
        {
            ChatController chat(&engine, path, nullptr);
            QAbstractItemModelTester tester(chat.messages(), QAbstractItemModelTester::FailureReportingMode::QtTest);
            chat.setMaxTokens(24);
            QSignalSpy saved(&chat, &ChatController::answerSaved);

            // r3 has no vision tower: an image is refused in words.
            QVERIFY(!chat.addAttachment(QUrl::fromLocalFile(QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png"))));
            QVERIFY2(chat.notice().contains(QStringLiteral("has no vision tower")), qPrintable(chat.notice()));

            QVERIFY2(chat.send(QStringLiteral("Hello there")), qPrintable(chat.notice()));
            QVERIFY(chat.generating());
            QVERIFY(!chat.send(QStringLiteral("too soon"))); // one answer at a time
            QVERIFY(saved.wait(30000));
            QVERIFY(!chat.generating());
            conversation = chat.currentId();
            QVERIFY(conversation != 0);
            QCOMPARE(chat.messages()->rowCount(), 2);
            const QModelIndex answer = chat.messages()->index(1);
            QCOMPARE(answer.data(MessageModel::RoleRole).toString(), QStringLiteral("assistant"));
            QVERIFY(answer.data(MessageModel::TokensRole).toInt() > 0);
            QVERIFY(answer.data(MessageModel::TokensPerSecondRole).toDouble() > 0);
            QVERIFY(!answer.data(MessageModel::StreamingRole).toBool());
            QTRY_VERIFY_WITH_TIMEOUT(chat.contextUsed() > 0, 10000);
            QCOMPARE(chat.contextLimit(), 4096);

            // Regenerate replaces the answer; edit-and-resend replaces the question and the answer.
            QVERIFY(chat.regenerate());
            QVERIFY(saved.wait(30000));
            QCOMPARE(chat.messages()->rowCount(), 2);
            QVERIFY(chat.editAndResend(0, QStringLiteral("Hello again")));
            QVERIFY(saved.wait(30000));
            QCOMPARE(chat.messages()->rowCount(), 2);
            QCOMPARE(chat.messages()->index(0).data(MessageModel::TextRole).toString(), QStringLiteral("Hello again"));
            editedAnswer = chat.messages()->index(1).data(MessageModel::TextRole).toString();

            // Stop: the request is cancelled before the worker reaches it.
            chat.setMaxTokens(2000);
            QVERIFY(chat.send(QStringLiteral("Tell me a long story")));
            chat.stop();
            QVERIFY(saved.wait(30000));
            QCOMPARE(chat.messages()->rowCount(), 4);
            QCOMPARE(chat.messages()->index(3).data(MessageModel::FinishReasonRole).toString(), QStringLiteral("cancelled"));
        }
        // "Restart": a new controller on the same file finds everything.
        ChatController again(&engine, path, nullptr);
        QCOMPARE(again.conversations()->rowCount(), 1);
        again.openConversation(conversation);
        QCOMPARE(again.messages()->rowCount(), 4);
        QCOMPARE(again.messages()->index(0).data(MessageModel::TextRole).toString(), QStringLiteral("Hello again"));
        QCOMPARE(again.messages()->index(1).data(MessageModel::TextRole).toString(), editedAnswer);
        QCOMPARE(again.currentTitle(), QStringLiteral("Hello there"));
    }

    // The context meter counts the draft once typing pauses, not per key, and the count
    // (rendering included) is the engine thread's work: twenty quick edits make one count,
    // and the meter then shows the last draft's tokens.
    void draftIsCountedOnceTypingPauses()
    {
        EngineController engine(nullptr);
        engine.openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
        ChatController chat(&engine, dbPath(QStringLiteral("draft.sqlite")), nullptr);
        QSignalSpy counted(&engine, &EngineController::countQueued);
        chat.setDraft(QStringLiteral("Hi"));
        QTRY_VERIFY_WITH_TIMEOUT(chat.contextUsed() > 0, 10000);
        QCOMPARE(counted.count(), 1);
        const int shortDraft = chat.contextUsed();
        counted.clear();
        QString draft;
        for (int i = 0; i < 20; ++i) {
            draft += QStringLiteral("word%1 ").arg(i);
            chat.setDraft(draft); // no event loop between edits: a per-key count would show as 20
        }
        QTRY_VERIFY_WITH_TIMEOUT(chat.contextUsed() > shortDraft + 20, 10000);
        QTest::qWait(300); // room for any late count
        QCOMPARE(counted.count(), 1);
    }

    // A sent message is counted ahead of its answer (issue 39 item 3: an answer was written
    // under "3 / 16,384 · the chat template's own tokens", the empty chat's count): the count
    // that arrives while the answer is written is the prompt's, with no template note.
    void theMeterCountsTheSentMessageWhileTheAnswerIsWritten()
    {
        EngineController engine(nullptr);
        engine.openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
        ChatController chat(&engine, dbPath(QStringLiteral("meter-while-answering.sqlite")), nullptr);
        chat.newConversation();
        QTRY_VERIFY_WITH_TIMEOUT(chat.contextUsed() > 0, 10000);
        const int empty = chat.contextUsed();
        QVERIFY(!chat.contextNote().isEmpty()); // the template's own tokens
        bool seenWhileAnswering = false;
        connect(&chat, &ChatController::contextChanged, this, [&] {
            if (chat.generating() && chat.contextUsed() > empty && chat.contextNote().isEmpty())
                seenWhileAnswering = true;
        });
        chat.setMaxTokens(64);
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        QVERIFY(chat.send(QStringLiteral("Hello there, how are you today?")));
        QVERIFY(saved.wait(60000));
        QVERIFY(seenWhileAnswering);
    }

    void reopenedConversationContinuesFromItsSavedState()
    {
        const QString path = dbPath(QStringLiteral("state.sqlite"));
        QList<GenerationStats> stats;
        auto record = [this, &stats](GenerationHandle *h) {
            connect(h, &GenerationHandle::finished, this, [&stats](const GenerationResult &r) { stats << r.stats; });
        };
        auto openR3 = [](EngineController &engine) {
            engine.openModel(QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste"), 0, 4096);
            QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
        };
        qint64 first = 0;
        QString stateFile;
        {
            EngineController engine(nullptr);
            openR3(engine);
            connect(&engine, &EngineController::generationQueued, this, record);
            ChatController chat(&engine, path, nullptr);
            chat.setMaxTokens(16);
            QSignalSpy saved(&chat, &ChatController::answerSaved);
            QVERIFY(chat.send(QStringLiteral("Hello there")));
            QVERIFY(saved.wait(30000));
            QCOMPARE(stats.last().reusedTokens, 0);
            // The second turn feeds only itself: the state holds the first question and answer.
            QVERIFY(chat.send(QStringLiteral("Tell me more.")));
            QVERIFY(saved.wait(30000));
            const GenerationStats second = stats.last();
            QVERIFY2(second.reusedTokens > stats.first().promptTokens,
                     qPrintable(QStringLiteral("kept %1 of %2").arg(second.reusedTokens).arg(second.promptTokens)));
            QCOMPARE(second.prefilledTokens, second.promptTokens - second.reusedTokens);
            QVERIFY(!second.restoredState);
            first = chat.currentId();
            stateFile = chat.stateFileFor(first);
            QVERIFY(stateFile.startsWith(QFileInfo(path).absolutePath()));
            QTRY_VERIFY(QFileInfo::exists(stateFile));

            // Another conversation takes the engine; reopening the first loads its saved state.
            chat.newConversation();
            QVERIFY(chat.send(QStringLiteral("Something else entirely")));
            QVERIFY(saved.wait(30000));
            QCOMPARE(stats.last().reusedTokens, 0);
            chat.openConversation(first);
            QVERIFY(chat.send(QStringLiteral("And then?")));
            QVERIFY(saved.wait(30000));
            const GenerationStats reopened = stats.last();
            QVERIFY(reopened.restoredState);
            QCOMPARE(reopened.prefilledTokens, reopened.promptTokens - reopened.reusedTokens);
            QVERIFY2(reopened.reusedTokens > second.promptTokens,
                     qPrintable(QStringLiteral("kept %1 of %2").arg(reopened.reusedTokens).arg(reopened.promptTokens)));
            qInfo("reopened: %d prompt tokens, %d from the saved state, %d prefilled", reopened.promptTokens,
                  reopened.reusedTokens, reopened.prefilledTokens);
        }
        // After a restart of the app (a new engine and controller on the same files).
        EngineController engine(nullptr);
        openR3(engine);
        connect(&engine, &EngineController::generationQueued, this, record);
        ChatController chat(&engine, path, nullptr);
        chat.setMaxTokens(16);
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        chat.openConversation(first);
        QCOMPARE(chat.messages()->rowCount(), 6);
        QVERIFY(chat.send(QStringLiteral("One more.")));
        QVERIFY(saved.wait(30000));
        QVERIFY(stats.last().restoredState);
        QCOMPARE(stats.last().prefilledTokens, stats.last().promptTokens - stats.last().reusedTokens);
        QVERIFY(stats.last().prefilledTokens < stats.last().promptTokens / 4);

        // Regenerating drops the answer the state holds: the whole conversation is read again.
        QVERIFY(chat.regenerate());
        QVERIFY(saved.wait(30000));
        QCOMPARE(stats.last().reusedTokens, 0);
        QCOMPARE(stats.last().prefilledTokens, stats.last().promptTokens);
        // So does an edit, and a deleted conversation leaves no state behind.
        QVERIFY(chat.editAndResend(0, QStringLiteral("Hello here")));
        QVERIFY(saved.wait(30000));
        QCOMPARE(stats.last().reusedTokens, 0);
        QTRY_VERIFY(QFileInfo::exists(stateFile));
        chat.deleteConversation(first);
        QTRY_VERIFY(!QFileInfo::exists(stateFile));
        QVERIFY(!QFileInfo::exists(stateFile + QStringLiteral(".json")));
    }

    void messageModelPassesTheTester()
    {
        MessageModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        ChatMessage m;
        m.role = QStringLiteral("user");
        m.text = QStringLiteral("a");
        model.append(m);
        m.role = QStringLiteral("assistant");
        m.streaming = true;
        model.append(m);
        m.text = QStringLiteral("ab");
        model.replace(1, m);
        QCOMPARE(changed.size(), 1);
        QVERIFY(changed.first().at(2).value<QList<int>>().contains(MessageModel::TextRole));
        model.replace(1, m); // no change, no signal
        QCOMPARE(changed.size(), 1);
        model.truncate(1);
        QCOMPARE(model.rowCount(), 1);
        model.setMessages({m, m, m});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.roleNames().value(MessageModel::ThinkingSecondsRole), QByteArray("thinkingSeconds"));
    }

    void attachmentsAcceptImagesAndRefuseOthers()
    {
        EngineController engine(nullptr);
        ChatController chat(&engine, dbPath(QStringLiteral("attach.sqlite")), nullptr);
        // A PNG dropped on the window (QML hands the controller its URL).
        const QString png = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");
        const QString jpg = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_b.jpg");
        QSignalSpy attached(&chat, &ChatController::attachmentsChanged);
        QCOMPARE(chat.addAttachments({QUrl::fromLocalFile(png), QUrl::fromLocalFile(jpg)}), 2);
        QCOMPARE(chat.attachments().size(), 2);
        QVERIFY(chat.notice().isEmpty());
        QVERIFY(attached.size() >= 1);

        // A text file, even one named .png, is refused with a sentence naming it.
        const QString fake = dbPath(QStringLiteral("notes.png"));
        {
            QFile f(fake);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("just some notes, not pixels\n");
        }
        QVERIFY(!chat.addAttachment(QUrl::fromLocalFile(fake)));
        QVERIFY2(chat.notice().contains(QStringLiteral("notes.png is not an image")), qPrintable(chat.notice()));
        QCOMPARE(chat.attachments().size(), 2);
        QVERIFY(!chat.addAttachment(QUrl::fromLocalFile(dbPath(QStringLiteral("missing.png")))));
        QVERIFY(chat.notice().contains(QStringLiteral("could not be found")));
        QVERIFY(!chat.addAttachment(QUrl(QStringLiteral("https://example.com/cat.png"))));
        QVERIFY(chat.notice().contains(QStringLiteral("Only files on this computer")));

        chat.removeAttachment(0);
        QCOMPARE(chat.attachments(), QStringList{jpg});
    }

    void markdownCodeBlocksAreSeparated()
    {
        const auto blocks = splitMarkdownBlocks(QStringLiteral("Try this:\n\n```cpp\nint main() {}\n```\nDone.\n```py\nprint(1)"));
        QCOMPARE(blocks.size(), 4);
        QVERIFY(!blocks[0].code);
        QVERIFY(blocks[1].code);
        QCOMPARE(blocks[1].language, QStringLiteral("cpp"));
        QCOMPARE(blocks[1].text, QStringLiteral("int main() {}"));
        QCOMPARE(blocks[2].text, QStringLiteral("Done."));
        QVERIFY(blocks[3].code); // still streaming: unclosed fence
        QCOMPARE(blocks[3].text, QStringLiteral("print(1)"));
    }

    void contextIsCutFromTheStart()
    {
        QList<ChatMessage> msgs;
        for (int i = 0; i < 10; ++i) {
            ChatMessage m;
            m.role = i % 2 == 0 ? QStringLiteral("user") : QStringLiteral("assistant");
            m.text = QString(100, QLatin1Char('a' + i));
            msgs << m;
        }
        // The whole thing fits: nothing is cut.
        QCOMPARE(firstMessageThatFits(msgs, 300, 100, 4096), 0);
        // 1000 counted tokens, 500 context, 100 reserved: the oldest go, starting on a user turn.
        const int first = firstMessageThatFits(msgs, 1000, 100, 500);
        QVERIFY(first > 0);
        QVERIFY(first < msgs.size());
        QCOMPARE(msgs[first].role, QStringLiteral("user"));
        // The rest is estimated to fit.
        QVERIFY((msgs.size() - first) * 100 <= 400);
    }
};

QTEST_GUILESS_MAIN(TestChat)
#include "tst_chat.moc"
