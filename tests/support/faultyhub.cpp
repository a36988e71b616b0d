#include "faultyhub.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>

struct FaultyHub::Conn {
    QPointer<QTcpSocket> sock;
    QString server;
    QByteArray buf;
    bool responded = false;
    // The body being streamed.
    QByteArray body;
    qint64 sent = 0;
    qint64 limit = -1; // stop after this many body bytes (a fault), -1: the whole body
    bool hasFault = false;
    FaultSpec fault;
    int logIndex = -1;
    bool finishing = false;
    QElapsedTimer clock;
};

namespace {
const char *reasonPhrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 302: return "Found";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}
} // namespace

FaultyHub::FaultyHub(QObject *parent) : QObject(parent)
{
    m_clock.start();
    m_server = new QTcpServer(this);
    connect(m_server, &QTcpServer::newConnection, this, [this] { onNewConnection(m_server, QStringLiteral("hub")); });
}

FaultyHub::~FaultyHub()
{
    for (Conn *c : std::as_const(m_conns)) {
        if (c->sock) {
            c->sock->disconnect(this);
            c->sock->abort();
        }
        delete c;
    }
}

bool FaultyHub::listen(QTcpServer *server, quint16 port)
{
    return server->listen(QHostAddress::LocalHost, port);
}

bool FaultyHub::start(quint16 port)
{
    if (!listen(m_server, port))
        return false;
    m_port = m_server->serverPort();
    return true;
}

QString FaultyHub::endpoint() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

bool FaultyHub::enableCdn()
{
    if (!m_cdn) {
        m_cdn = new QTcpServer(this);
        connect(m_cdn, &QTcpServer::newConnection, this, [this] { onNewConnection(m_cdn, QStringLiteral("cdn")); });
    }
    if (!listen(m_cdn, m_cdnPort))
        return false;
    m_cdnPort = m_cdn->serverPort();
    return true;
}

QByteArray FaultyHub::randomContent(qint64 size, quint32 seed)
{
    QByteArray out(size, Qt::Uninitialized);
    QRandomGenerator rng(seed);
    qint64 i = 0;
    for (; i + 4 <= size; i += 4) {
        const quint32 v = rng.generate();
        memcpy(out.data() + i, &v, 4);
    }
    for (; i < size; ++i)
        out[i] = static_cast<char>(rng.generate() & 0xff);
    return out;
}

QString FaultyHub::sha256Hex(const QByteArray &content)
{
    return QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
}

QString FaultyHub::gitBlobSha1Hex(const QByteArray &content)
{
    QCryptographicHash h(QCryptographicHash::Sha1);
    h.addData("blob " + QByteArray::number(content.size()) + '\0');
    h.addData(content);
    return QString::fromLatin1(h.result().toHex());
}

void FaultyHub::addFile(const QString &repo, const QString &path, const QByteArray &content, bool lfs)
{
    RepoFile f;
    f.content = content;
    f.lfs = lfs;
    f.sha256 = sha256Hex(content);
    f.gitOid = gitBlobSha1Hex(content);
    m_repos[repo][path] = f;
}

QByteArray FaultyHub::content(const QString &repo, const QString &path) const
{
    return m_repos.value(repo).value(path).content;
}

QStringList FaultyHub::paths(const QString &repo) const
{
    return m_repos.value(repo).keys();
}

void FaultyHub::addFault(const QString &path, const FaultSpec &fault)
{
    m_faults[path].append(fault);
}

void FaultyHub::setAlwaysStatus(const QString &path, int status)
{
    if (status == 0)
        m_always.remove(path);
    else
        m_always[path] = status;
}

void FaultyHub::setListedSha256(const QString &path, const QString &sha256)
{
    m_listedSha[path] = sha256;
}

void FaultyHub::setListedSize(const QString &path, qint64 size)
{
    m_listedSize[path] = size;
}

QList<FaultyHub::Served> FaultyHub::logFor(const QString &path) const
{
    QList<Served> out;
    for (const Served &s : m_log)
        if (s.path == path)
            out.append(s);
    return out;
}

qint64 FaultyHub::bytesSentFor(const QString &path) const
{
    qint64 n = 0;
    for (const Served &s : m_log)
        if (s.path == path)
            n += s.bytesSent;
    return n;
}

void FaultyHub::restart(int downMs)
{
    m_server->close();
    if (m_cdn)
        m_cdn->close();
    const QList<Conn *> conns = m_conns;
    for (Conn *c : conns)
        closeConn(c);
    QTimer::singleShot(downMs, this, [this] {
        listen(m_server, m_port);
        if (m_cdn)
            listen(m_cdn, m_cdnPort);
    });
}

void FaultyHub::onNewConnection(QTcpServer *server, const QString &name)
{
    while (QTcpSocket *s = server->nextPendingConnection()) {
        auto *c = new Conn;
        c->sock = s;
        c->server = name;
        m_conns.append(c);
        connect(s, &QTcpSocket::readyRead, this, [this, c] { onReadable(c); });
        connect(s, &QTcpSocket::bytesWritten, this, [this, c] { pumpBody(c); });
        connect(s, &QTcpSocket::disconnected, this, [this, c] { closeConn(c); });
    }
}

void FaultyHub::closeConn(Conn *c)
{
    if (!m_conns.removeOne(c))
        return;
    if (c->sock) {
        c->sock->disconnect(this);
        c->sock->abort();
        c->sock->deleteLater();
    }
    delete c;
}

void FaultyHub::onReadable(Conn *c)
{
    if (!c->sock || c->responded)
        return;
    c->buf += c->sock->readAll();
    const qsizetype end = c->buf.indexOf("\r\n\r\n");
    if (end < 0) {
        if (c->buf.size() > 65536)
            closeConn(c);
        return;
    }
    c->responded = true;
    const QList<QByteArray> lines = c->buf.left(end).split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    QHash<QByteArray, QByteArray> headers;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0)
            headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
    }
    respond(c, requestLine.value(0), requestLine.value(1), headers);
}

void FaultyHub::sendSimple(Conn *c, int status, const QByteArray &body, const QList<QPair<QByteArray, QByteArray>> &extra)
{
    QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    head += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    for (const auto &h : extra)
        head += h.first + ": " + h.second + "\r\n";
    head += "Connection: close\r\n\r\n";
    c->sock->write(head + body);
    c->finishing = true;
    c->limit = -1;
    c->body.clear();
    if (c->logIndex >= 0)
        m_log[c->logIndex].status = status;
    pumpBody(c);
}

void FaultyHub::respond(Conn *c, const QByteArray &method, const QByteArray &target, const QHash<QByteArray, QByteArray> &headers)
{
    const QUrl url(QString::fromLatin1(target));
    const QStringList raw = url.path(QUrl::FullyEncoded).split(QLatin1Char('/'));
    QStringList seg;
    for (const QString &s : raw)
        seg << QUrl::fromPercentEncoding(s.toLatin1());
    Served entry;
    entry.server = c->server;
    entry.authorized = headers.contains("authorization");
    entry.range = headers.value("range");
    entry.atMs = m_clock.elapsed();
    m_log.append(entry);
    c->logIndex = static_cast<int>(m_log.size() - 1);
    if (method != "GET" && method != "HEAD") {
        sendSimple(c, 405, "method not allowed");
        return;
    }
    // /api/models/{owner}/{name}/tree/{rev}
    if (c->server == QLatin1String("hub") && seg.size() >= 7 && seg[1] == QLatin1String("api") && seg[2] == QLatin1String("models")
        && seg[5] == QLatin1String("tree")) {
        const int page = QUrlQuery(url).queryItemValue(QStringLiteral("page")).toInt();
        serveListing(c, seg[3] + QLatin1Char('/') + seg[4], page);
        return;
    }
    // /cdn/{owner}/{name}/{path...}
    if (c->server == QLatin1String("cdn") && seg.size() >= 5 && seg[1] == QLatin1String("cdn")) {
        serveFile(c, seg[2] + QLatin1Char('/') + seg[3], seg.mid(4).join(QLatin1Char('/')), headers);
        return;
    }
    // /{owner}/{name}/resolve/{rev}/{path...}
    if (c->server == QLatin1String("hub") && seg.size() >= 6 && seg[3] == QLatin1String("resolve")) {
        const QString repo = seg[1] + QLatin1Char('/') + seg[2];
        const QString path = seg.mid(5).join(QLatin1Char('/'));
        const RepoFile f = m_repos.value(repo).value(path);
        if (m_cdn && m_cdn->isListening() && f.lfs && m_repos.value(repo).contains(path) && !m_always.contains(path)) {
            m_log[c->logIndex].path = path;
            QStringList enc;
            for (const QString &s : (repo + QLatin1Char('/') + path).split(QLatin1Char('/')))
                enc << QString::fromLatin1(QUrl::toPercentEncoding(s));
            const QByteArray location = QStringLiteral("http://127.0.0.1:%1/cdn/%2").arg(m_cdnPort).arg(enc.join(QLatin1Char('/'))).toLatin1();
            sendSimple(c, 302, {}, {{"Location", location}, {"X-Linked-Etag", '"' + f.sha256.toLatin1() + '"'}});
            return;
        }
        serveFile(c, repo, path, headers);
        return;
    }
    sendSimple(c, 404, "not found");
}

void FaultyHub::serveListing(Conn *c, const QString &repo, int page)
{
    // The listing's faults are those of the path "": a status forever, or queued statuses.
    if (m_always.contains(QString())) {
        sendSimple(c, m_always.value(QString()), "no");
        return;
    }
    QList<FaultSpec> &queue = m_faults[QString()];
    for (qsizetype i = 0; i < queue.size(); ++i)
        if (queue[i].kind == Fault::Status) {
            const FaultSpec fault = queue.takeAt(i);
            QList<QPair<QByteArray, QByteArray>> extra;
            if (fault.retryAfterS >= 0)
                extra.append({"Retry-After", QByteArray::number(fault.retryAfterS)});
            sendSimple(c, fault.status, "busy", extra);
            return;
        }
    if (!m_repos.contains(repo)) {
        sendSimple(c, 404, "{\"error\":\"Repository not found\"}");
        return;
    }
    QJsonArray all;
    QStringList dirs;
    for (auto it = m_repos[repo].cbegin(); it != m_repos[repo].cend(); ++it) {
        const QString dir = it.key().section(QLatin1Char('/'), 0, -2);
        if (!dir.isEmpty() && !dirs.contains(dir)) {
            dirs << dir;
            all.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("directory")},
                                   {QStringLiteral("oid"), QStringLiteral("0000000000000000000000000000000000000000")},
                                   {QStringLiteral("size"), 0},
                                   {QStringLiteral("path"), dir}});
        }
        const qint64 size = m_listedSize.value(it.key(), it->content.size());
        QJsonObject o{{QStringLiteral("type"), QStringLiteral("file")},
                      {QStringLiteral("size"), size},
                      {QStringLiteral("path"), it.key()}};
        if (it->lfs) {
            o.insert(QStringLiteral("oid"), gitBlobSha1Hex("version https://git-lfs.github.com/spec/v1\noid sha256:" + it->sha256.toLatin1()));
            o.insert(QStringLiteral("lfs"), QJsonObject{{QStringLiteral("oid"), m_listedSha.value(it.key(), it->sha256)},
                                                        {QStringLiteral("size"), size},
                                                        {QStringLiteral("pointerSize"), 134}});
        } else {
            o.insert(QStringLiteral("oid"), it->gitOid);
        }
        all.append(o);
    }
    QList<QPair<QByteArray, QByteArray>> extra{{"Content-Type", "application/json"}};
    QJsonArray out = all;
    if (m_pageSize > 0) {
        out = QJsonArray();
        for (int i = page * m_pageSize; i < all.size() && i < (page + 1) * m_pageSize; ++i)
            out.append(all[i]);
        if ((page + 1) * m_pageSize < all.size()) {
            QStringList enc;
            for (const QString &s : repo.split(QLatin1Char('/')))
                enc << QString::fromLatin1(QUrl::toPercentEncoding(s));
            extra.append({"Link", QStringLiteral("<%1/api/models/%2/tree/main?recursive=1&page=%3>; rel=\"next\"")
                                      .arg(endpoint(), enc.join(QLatin1Char('/')))
                                      .arg(page + 1)
                                      .toLatin1()});
        }
    }
    sendSimple(c, 200, QJsonDocument(out).toJson(QJsonDocument::Compact), extra);
}

void FaultyHub::serveFile(Conn *c, const QString &repo, const QString &path, const QHash<QByteArray, QByteArray> &headers)
{
    Served &entry = m_log[c->logIndex];
    entry.path = path;
    if (!m_repos.value(repo).contains(path)) {
        sendSimple(c, 404, "Entry not found");
        return;
    }
    if (m_always.contains(path)) {
        sendSimple(c, m_always.value(path), "no");
        return;
    }
    const RepoFile &f = m_repos[repo][path];
    // The first queued fault that applies to a request starting where this one does.
    qint64 askedStart = 0;
    if (headers.value("range").startsWith("bytes="))
        askedStart = headers.value("range").mid(6).split('-').value(0).toLongLong();
    FaultSpec fault;
    bool hasFault = false;
    QList<FaultSpec> &queue = m_faults[path];
    for (qsizetype i = 0; i < queue.size(); ++i) {
        if (queue[i].onlyAt < 0 || queue[i].onlyAt == askedStart) {
            fault = queue.takeAt(i);
            hasFault = true;
            break;
        }
    }
    if (hasFault && fault.kind == Fault::Status) {
        QList<QPair<QByteArray, QByteArray>> extra;
        if (fault.retryAfterS >= 0)
            extra.append({"Retry-After", QByteArray::number(fault.retryAfterS)});
        sendSimple(c, fault.status, "busy", extra);
        return;
    }
    const QByteArray etag = '"' + (f.lfs ? f.sha256 : f.gitOid).toLatin1() + '"';
    const qint64 size = f.content.size();
    qint64 first = 0;
    qint64 last = size - 1;
    bool partial = false;
    const QByteArray range = headers.value("range");
    const bool ignoreRange = hasFault && fault.kind == Fault::IgnoreRange;
    if (!range.isEmpty() && !ignoreRange && range.startsWith("bytes=")) {
        const QByteArray spec = range.mid(6);
        const qsizetype dash = spec.indexOf('-');
        const QByteArray ifRange = headers.value("if-range");
        if (dash > 0 && (ifRange.isEmpty() || ifRange == etag)) {
            first = spec.left(dash).toLongLong();
            if (dash + 1 < spec.size())
                last = qMin(size - 1, spec.mid(dash + 1).toLongLong());
            if (first >= size) {
                entry.rangeStart = first;
                sendSimple(c, 416, {}, {{"Content-Range", "bytes */" + QByteArray::number(size)}, {"ETag", etag}});
                return;
            }
            partial = true;
        }
    }
    entry.rangeStart = first;
    entry.status = partial ? 206 : 200;
    c->body = f.content.mid(first, last - first + 1);
    if (hasFault && fault.kind == Fault::CorruptByte && fault.bytes >= first && fault.bytes <= last)
        c->body[fault.bytes - first] = static_cast<char>(c->body[fault.bytes - first] ^ 0x5a);
    QByteArray head = "HTTP/1.1 " + QByteArray::number(entry.status) + ' ' + reasonPhrase(entry.status) + "\r\n";
    head += "Content-Length: " + QByteArray::number(c->body.size()) + "\r\n";
    head += "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nETag: " + etag + "\r\n";
    if (partial)
        head += "Content-Range: bytes " + QByteArray::number(first) + '-' + QByteArray::number(last) + '/' + QByteArray::number(size) + "\r\n";
    head += "Connection: close\r\n\r\n";
    c->sock->write(head);
    c->hasFault = hasFault;
    c->fault = fault;
    c->limit = -1;
    if (hasFault && (fault.kind == Fault::CutAfter || fault.kind == Fault::Stall || fault.kind == Fault::RestartAfter))
        c->limit = qMin<qint64>(fault.bytes, c->body.size());
    c->sent = 0;
    c->clock.start();
    pumpBody(c);
}

void FaultyHub::pumpBody(Conn *c)
{
    if (!m_conns.contains(c) || !c->sock)
        return;
    const qint64 target = c->limit >= 0 ? c->limit : c->body.size();
    while (c->sent < target && c->sock->bytesToWrite() < 65536) {
        qint64 n = qMin<qint64>(16384, target - c->sent);
        if (m_rate > 0) {
            const qint64 allowed = m_rate * c->clock.elapsed() / 1000 - c->sent;
            if (allowed <= 0) {
                QTimer::singleShot(10, this, [this, c] { pumpBody(c); });
                return;
            }
            n = qMin(n, allowed);
        }
        c->sock->write(c->body.constData() + c->sent, n);
        c->sent += n;
        if (c->logIndex >= 0 && c->logIndex < m_log.size())
            m_log[c->logIndex].bytesSent = c->sent;
    }
    if (c->sent < target || c->sock->bytesToWrite() > 0)
        return;
    // Everything this response will send has reached the kernel.
    if (c->limit >= 0 && c->hasFault) {
        const FaultSpec f = c->fault;
        c->hasFault = false;
        if (f.kind == Fault::Stall) {
            QTimer::singleShot(f.ms, this, [this, c] {
                if (m_conns.contains(c) && c->sock)
                    c->sock->disconnectFromHost();
            });
            return;
        }
        if (f.kind == Fault::RestartAfter) {
            restart(f.ms);
            return;
        }
    }
    if (c->sock->state() == QAbstractSocket::ConnectedState)
        c->sock->disconnectFromHost();
}
