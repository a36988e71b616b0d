// ChatController's attachments: which files it accepts (images the open model can read)
// and the copies it keeps beside the database, apart from sending and answering.
#include "chat/chatcontroller.h"

#include "engine/enginecontroller.h"
#include "chat/imagecheck.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

QString ChatController::firstProblemForImage(const QString &path) const
{
    if (const QString p = imageProblem(path); !p.isEmpty())
        return p;
    // With no model open the image is kept: a vision model may be opened before sending.
    if (m_engine->state() != EngineController::NoModel && !m_engine->modelName().isEmpty() && !m_engine->hasVision())
        return tr("%1 has no vision tower, so it cannot read %2. Open a model with vision (Kimi K3) to ask about images.")
            .arg(m_engine->modelName(), QFileInfo(path).fileName());
    return {};
}

QString ChatController::imageFilePatterns() const
{
    return readableImagePatterns();
}

bool ChatController::addAttachment(const QUrl &url)
{
    if (!url.isLocalFile()) {
        setNotice(tr("Only files on this computer can be attached (%1 is not one).").arg(url.toDisplayString()));
        return false;
    }
    const QString path = QFileInfo(url.toLocalFile()).absoluteFilePath();
    if (const QString problem = firstProblemForImage(path); !problem.isEmpty()) {
        setNotice(problem);
        return false;
    }
    if (!m_attachments.contains(path)) {
        m_attachments << path;
        Q_EMIT attachmentsChanged();
    }
    setNotice({});
    return true;
}

int ChatController::addAttachments(const QList<QUrl> &urls)
{
    int accepted = 0;
    QString lastProblem;
    for (const QUrl &u : urls) {
        if (addAttachment(u))
            ++accepted;
        else
            lastProblem = m_notice;
    }
    // A refusal stays visible even when another file of the same drop was accepted.
    if (!lastProblem.isEmpty())
        setNotice(lastProblem);
    return accepted;
}

void ChatController::removeAttachment(int index)
{
    if (index < 0 || index >= m_attachments.size())
        return;
    m_attachments.removeAt(index);
    Q_EMIT attachmentsChanged();
}

QString ChatController::keepImage(const QString &path) const
{
    QString folder = m_session.imagesFolder();
    const QFileInfo source(path);
    // A format the engine does not decode (WebP, TIFF, HEIF…) is decoded here and kept as a
    // PNG of the same pixels (imagecheck.h): the engine then reads exactly those pixels.
    const bool decodeHere = !engineReadsImage(path);
    if (folder.isEmpty() && decodeHere)
        folder = QDir::temp().filePath(QStringLiteral("waste-studio-images"));
    if (folder.isEmpty() || (!decodeHere && source.absolutePath() == QDir(folder).absolutePath()))
        return path;
    // Named for the file it came from (path, size, time): attaching it again reuses the copy.
    const QByteArray key = QStringLiteral("%1|%2|%3")
                               .arg(source.absoluteFilePath())
                               .arg(source.size())
                               .arg(source.lastModified().toMSecsSinceEpoch())
                               .toUtf8();
    const QString name = QString::fromLatin1(QCryptographicHash::hash(key, QCryptographicHash::Sha256).toHex().left(24));
    const QString suffix = decodeHere ? QStringLiteral("png") : source.suffix().toLower();
    const QString target = QDir(folder).filePath(suffix.isEmpty() ? name : name + QLatin1Char('.') + suffix);
    if (QFileInfo::exists(target))
        return target;
    // Written under another name first: a copy cut short never takes the final name.
    const QString part = target + QStringLiteral(".part");
    QFile::remove(part);
    const bool written = QDir().mkpath(folder)
                         && (decodeHere ? decodeToPng(path, part).isEmpty() : QFile::copy(path, part));
    if (!written || !QFile::rename(part, target)) {
        QFile::remove(part);
        return path; // the original still works while it stays where it is
    }
    return target;
}
