// The app killed mid-answer (SIGKILL: no destructor, no last save) loses nothing: the chat
// reopens with the question, what the answer had written, marked as cut off, and Regenerate
// answers it again. The test runs itself as a child process that chats on the reference
// container and kills itself once the store holds part of an answer still being written.
#include "chat/chatcontroller.h"
#include "chat/conversationstore.h"
#include "chat/finishreasontext.h"
#include "chat/messagemodel.h"
#include "engine/enginecontroller.h"

#include <QCoreApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstdio>

namespace {

const QString kModel = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");
const QString kQuestion = QStringLiteral("Tell me a long story about the sea.");

// The child: asks, and as soon as the store holds words of an answer still under way, dies
// the way a crash does. An answer that ends before its first saved words is asked again.
int answerUntilKilled(const QString &databasePath)
{
    EngineController engine(nullptr);
    engine.openModel(kModel, 0, 4096);
    QElapsedTimer waited;
    waited.start();
    while (engine.state() != EngineController::Ready && waited.elapsed() < 60000)
        QTest::qWait(20);
    ChatController chat(&engine, databasePath, nullptr);
    chat.setMaxTokens(3500);
    ConversationStore reader(databasePath); // a second connection, as another process would read it
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (!chat.send(kQuestion))
            return 2;
        while (chat.generating()) {
            QTest::qWait(5);
            const QList<ChatMessage> saved = reader.messages(chat.currentId());
            if (!saved.isEmpty() && saved.last().role == QLatin1String("assistant") && !saved.last().text.isEmpty()
                && chat.generating()) {
                std::fprintf(stdout, "killed after %d saved characters\n", int(saved.last().text.size()));
                std::fflush(stdout);
                std::raise(SIGKILL);
            }
        }
    }
    return 3; // every answer ended before its first words were saved
}

} // namespace

class TestChatCrash : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void killedMidAnswerReopensWithWhatWasWritten()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("chats.sqlite"));
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--answer-until-killed"), db});
        QVERIFY(child.waitForFinished(240000));
        const QByteArray said = child.readAllStandardOutput();
        QVERIFY2(child.exitStatus() == QProcess::CrashExit, said.constData());
        QVERIFY2(said.contains("killed after"), said.constData());

        EngineController engine(nullptr);
        engine.openModel(kModel, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 60000);
        ChatController chat(&engine, db, nullptr);
        QCOMPARE(chat.conversations()->rowCount(), 1);
        chat.openConversation(chat.conversations()->index(0).data(ConversationListModel::IdRole).toLongLong());
        MessageModel *messages = chat.messages();
        const int n = messages->rowCount();
        QVERIFY(n >= 2);
        QCOMPARE(messages->index(n - 2).data(MessageModel::TextRole).toString(), kQuestion);
        const QModelIndex cut = messages->index(n - 1);
        QCOMPARE(cut.data(MessageModel::RoleRole).toString(), QStringLiteral("assistant"));
        QVERIFY(!cut.data(MessageModel::TextRole).toString().isEmpty());
        QCOMPARE(cut.data(MessageModel::FinishReasonRole).toString(), QString::fromLatin1(kInterrupted));
        QVERIFY(!cut.data(MessageModel::StreamingRole).toBool());

        // Regenerate answers the question again and the new answer replaces the cut one.
        QSignalSpy saved(&chat, &ChatController::answerSaved);
        chat.setMaxTokens(16);
        QVERIFY(chat.regenerate());
        QVERIFY(saved.wait(60000));
        QCOMPARE(messages->rowCount(), n);
        const QString reason = messages->index(n - 1).data(MessageModel::FinishReasonRole).toString();
        QVERIFY2(reason == QLatin1String("stop") || reason == QLatin1String("length"), qPrintable(reason));
        ConversationStore store(db);
        const QList<ChatMessage> stored = store.messages(chat.currentId());
        QCOMPARE(stored.size(), n);
        QCOMPARE(stored.last().finishReason, reason);
    }
};

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc == 3 && QByteArray(argv[1]) == "--answer-until-killed")
        return answerUntilKilled(QString::fromLocal8Bit(argv[2]));
    TestChatCrash test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_chat_crash.moc"
