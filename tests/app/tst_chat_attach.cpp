// Attaching pictures through the real window, as a person does it: the "+" button opens the
// file dialog; a single click on a file and Open attach that file (not the folder's first
// one), Ctrl+click selects several, kept in the order they were picked and shown in that
// order in the message. The filter lists every format Qt's image plugins read; a WebP or a
// TIFF reaches the engine as a PNG of the same pixels, so the answer is the one the same
// pixels give as a PNG; an image in a format this system cannot decode is named as such.
#include "studioapplication.h"

#include "chat/chatcontroller.h"
#include "engine/enginecontroller.h"
#include "filepicker.h"
#include "settings/appsettings.h"
#include "windowtest.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QImage>
#include <QImageWriter>
#include <QListView>
#include <QPushButton>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kVision = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/v1.waste");
const QString kPng = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");

// The row of `name` in the dialog's file list once the folder has been read (the list fills
// on a thread).
QModelIndex rowOf(QListView *list, const QString &name)
{
    QModelIndex found;
    // Not found in time: the caller's QVERIFY(isValid()) says so.
    (void)QTest::qWaitFor([&] {
        const QModelIndexList hits = list->model()->match(list->model()->index(0, 0, list->rootIndex()), Qt::DisplayRole,
                                                          name, 1, Qt::MatchExactly);
        if (!hits.isEmpty())
            found = hits.first();
        return found.isValid();
    }, 10000);
    return found;
}

double luminance(const QColor &c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestChatAttach : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_folder;

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("chat-attach test"));
        WindowTest::collectWarnings();
        // A folder like the one in the report: a log first, then pictures.
        m_folder = m_tmp.filePath(QStringLiteral("pictures"));
        QDir().mkpath(m_folder);
        QFile log(m_folder + QStringLiteral("/app.log"));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write("not a picture\n");
        log.close();
        const QImage picture(kPng);
        QVERIFY(!picture.isNull());
        QVERIFY(picture.save(m_folder + QStringLiteral("/beach.png")));
        QVERIFY(picture.mirrored().save(m_folder + QStringLiteral("/cat.png")));
        QImageWriter webp(m_folder + QStringLiteral("/phone.webp"), "webp");
        webp.setQuality(100); // lossless: the same pixels as the PNG
        QVERIFY2(webp.write(picture), qPrintable(webp.errorString()));
        QVERIFY(picture.save(m_folder + QStringLiteral("/scan.tiff"), "tiff"));
        // The first bytes of an iPhone photo: an ISO box "ftyp" of brand "heic".
        QFile heic(m_folder + QStringLiteral("/iphone.heic"));
        QVERIFY(heic.open(QIODevice::WriteOnly));
        heic.write(QByteArray("\0\0\0\x18" "ftypheic\0\0\0\0mif1heic", 24) + QByteArray(200, '\0'));
    }

    void aClickAndOpenAttachThatFileAndCtrlClickSeveral()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->setProperty("currentPage", 3);
        ChatController *chat = services->chat.get();

        auto *picker = window->findChild<FilePicker *>(QStringLiteral("attachPicker"));
        QVERIFY(picker);
        picker->setProperty("folder", m_folder);
        // Every format the plugins read is offered, WebP and TIFF included.
        const QString filter = picker->property("nameFilters").toStringList().value(0);
        for (const char *pattern : {"*.png", "*.jpg", "*.webp", "*.tiff", "*.gif", "*.bmp"})
            QVERIFY2(filter.contains(QLatin1String(pattern)), qPrintable(filter));

        auto *attach = window->findChild<QQuickItem *>(QStringLiteral("attachButton"));
        QVERIFY(attach);
        WindowTest::clickCentre(window, attach);
        QTRY_VERIFY(picker->isOpen());
        QFileDialog *dialog = picker->dialog();
        QVERIFY(dialog);
        dialog->selectNameFilter(dialog->nameFilters().last()); // "All files": app.log is listed first
        auto *list = dialog->findChild<QListView *>(QStringLiteral("listView"));
        QVERIFY(list);
        const QModelIndex cat = rowOf(list, QStringLiteral("cat.png"));
        QVERIFY(cat.isValid());
        QVERIFY(rowOf(list, QStringLiteral("app.log")).isValid());
        QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::NoModifier, list->visualRect(cat).center());
        // The selected row stays readable: its text against its background.
        const QPalette pal = list->palette();
        QVERIFY(contrast(pal.color(QPalette::Active, QPalette::HighlightedText), pal.color(QPalette::Active, QPalette::Highlight)) >= 4.5);
        auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("buttonBox"));
        QVERIFY(buttons);
        QPushButton *openButton = buttons->button(QDialogButtonBox::Open);
        QVERIFY(openButton && openButton->isEnabled());
        QTest::mouseClick(openButton, Qt::LeftButton);
        QTRY_VERIFY(!picker->isOpen());
        QCOMPARE(chat->attachments(), QStringList{m_folder + QStringLiteral("/cat.png")});
        chat->removeAttachment(0);

        // Two at once: click one, Ctrl+click another; they come in the order picked.
        WindowTest::clickCentre(window, attach);
        QTRY_VERIFY(picker->isOpen());
        dialog = picker->dialog();
        list = dialog->findChild<QListView *>(QStringLiteral("listView"));
        const QModelIndex catAgain = rowOf(list, QStringLiteral("cat.png"));
        const QModelIndex beach = rowOf(list, QStringLiteral("beach.png"));
        QVERIFY(catAgain.isValid() && beach.isValid());
        QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::NoModifier, list->visualRect(catAgain).center());
        QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::ControlModifier, list->visualRect(beach).center());
        QTest::mouseClick(dialog->findChild<QDialogButtonBox *>(QStringLiteral("buttonBox"))->button(QDialogButtonBox::Open),
                          Qt::LeftButton);
        QTRY_VERIFY(!picker->isOpen());
        QCOMPARE(chat->attachments(),
                 (QStringList{m_folder + QStringLiteral("/cat.png"), m_folder + QStringLiteral("/beach.png")}));

        // Sent, the message shows them in that order, left to right.
        EngineController *engine = services->engine.get();
        engine->openModel(kVision, 0, 4096);
        QTRY_COMPARE_WITH_TIMEOUT(engine->state(), EngineController::Ready, 30000);
        chat->setMaxTokens(4);
        QSignalSpy saved(chat, &ChatController::answerSaved);
        QVERIFY2(chat->send(QStringLiteral("Which is first?")), qPrintable(chat->notice()));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 60000);
        QTest::qWait(200);
        QList<QQuickItem *> thumbs;
        for (QQuickItem *item : WindowTest::itemsNamed(window->contentItem(), QStringLiteral("messageImage")))
            if (item->isVisible())
                thumbs << item;
        QCOMPARE(thumbs.size(), 2);
        std::sort(thumbs.begin(), thumbs.end(), [](QQuickItem *a, QQuickItem *b) {
            return a->mapToScene(QPointF()).x() < b->mapToScene(QPointF()).x();
        });
        const QStringList kept = chat->messages()->index(0).data(MessageModel::ImagesRole).toStringList();
        QCOMPARE(kept.size(), 2);
        QCOMPARE(thumbs[0]->property("modelData").toString(), kept[0]);
        QCOMPARE(thumbs[1]->property("modelData").toString(), kept[1]);
        QCOMPARE(QImage(kept[0]), QImage(m_folder + QStringLiteral("/cat.png")));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }

    void webpAndTiffGiveTheAnswerOfTheSamePixelsAsPng()
    {
        // Each picture in a fresh engine and chat, so no state is shared between them.
        QList<GenerationResult> results;
        for (const QString name : {QStringLiteral("beach.png"), QStringLiteral("phone.webp"), QStringLiteral("scan.tiff")}) {
            QTemporaryDir dir;
            EngineController engine(nullptr);
            engine.openModel(kVision, 0, 4096);
            QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineController::Ready, 30000);
            ChatController chat(&engine, dir.filePath(QStringLiteral("chat.sqlite")), nullptr);
            chat.setTemperature(0);
            chat.setMaxTokens(12);
            connect(&engine, &EngineController::generationQueued, this, [this, &results](GenerationHandle *h) {
                connect(h, &GenerationHandle::finished, this, [&results](const GenerationResult &r) { results << r; });
            });
            QSignalSpy saved(&chat, &ChatController::answerSaved);
            QVERIFY2(chat.addAttachment(QUrl::fromLocalFile(m_folder + QLatin1Char('/') + name)), qPrintable(chat.notice()));
            QVERIFY2(chat.send(QStringLiteral("Describe the picture.")), qPrintable(chat.notice()));
            QVERIFY(saved.wait(60000));
            const QString kept = chat.messages()->index(0).data(MessageModel::ImagesRole).toStringList().value(0);
            // What the engine read: a PNG (a format it decodes) of the very same pixels.
            QVERIFY2(kept.endsWith(QLatin1String(".png")), qPrintable(kept));
            QCOMPARE(QImage(kept).convertToFormat(QImage::Format_RGBA8888),
                     QImage(kPng).convertToFormat(QImage::Format_RGBA8888));
            QVERIFY(chat.messages()->index(1).data(MessageModel::ErrorRole).toString().isEmpty());
        }
        QCOMPARE(results.size(), 3);
        QVERIFY(!results[0].tokens.isEmpty());
        QCOMPARE(results[1].tokens, results[0].tokens);
        QCOMPARE(results[2].tokens, results[0].tokens);
    }

    void anUndecodableFormatIsNamed()
    {
        QTemporaryDir dir;
        EngineController engine(nullptr);
        ChatController chat(&engine, dir.filePath(QStringLiteral("chat.sqlite")), nullptr);
        QVERIFY(!chat.addAttachment(QUrl::fromLocalFile(m_folder + QStringLiteral("/iphone.heic"))));
        QVERIFY2(chat.notice().contains(QLatin1String("a HEIF image; this system has no HEIF decoder")), qPrintable(chat.notice()));
        QVERIFY(!chat.addAttachment(QUrl::fromLocalFile(m_folder + QStringLiteral("/app.log"))));
        QVERIFY2(chat.notice().contains(QLatin1String("is not an image")), qPrintable(chat.notice()));
        QVERIFY(chat.attachments().isEmpty());
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestChatAttach t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_chat_attach.moc"
