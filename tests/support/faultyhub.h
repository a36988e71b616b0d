// FaultyHub: a small Hugging Face-compatible hub on 127.0.0.1 for tests (QTcpServer, HTTP/1.1,
// one request per connection). It serves the file listing
//   GET /api/models/{owner}/{name}/tree/{rev}?recursive=1
// and the files
//   GET /{owner}/{name}/resolve/{rev}/{path}
// with real Range support (206 + Content-Range, If-Range, 416), ETags, optional pagination of
// the listing and an optional "CDN" (a second port the hub redirects LFS files to).
// Faults are queued per file and consumed one per request: cut the connection after N body
// bytes, answer 503/429 with Retry-After, stall after N bytes, answer a ranged request with 200,
// flip one byte, or take the whole server down after N bytes and bring it back on the same port.
// Every request is logged (range asked, bytes sent, status, whether it carried a token).
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>

class QTcpServer;
class QTcpSocket;

class FaultyHub : public QObject {
    Q_OBJECT
public:
    enum class Fault {
        CutAfter,      // send `bytes` of the body, then close the connection
        Status,        // answer `status` (e.g. 503, 429) with Retry-After `retryAfterS` if >= 0
        Stall,         // send `bytes`, then nothing for `ms`, then close
        IgnoreRange,   // answer a ranged request with 200 and the whole file
        CorruptByte,   // flip the byte at file offset `bytes` if this response carries it
        RestartAfter,  // send `bytes`, then stop listening and drop every connection for `ms`
    };
    struct FaultSpec {
        Fault kind = Fault::CutAfter;
        qint64 bytes = 0;
        int status = 503;
        int retryAfterS = -1;
        int ms = 0;
        qint64 onlyAt = -1; // >= 0: only a request starting at this offset (0: no Range) triggers it
    };
    struct Served {
        QString path;       // file path in the repository ("" for the listing)
        QString server;     // "hub" or "cdn"
        QByteArray range;   // the Range header as sent
        qint64 rangeStart = 0;
        qint64 bytesSent = 0;
        int status = 0;
        bool authorized = false; // carried an Authorization header
        qint64 atMs = 0;    // when the request arrived (ms since the hub started)
    };

    explicit FaultyHub(QObject *parent = nullptr);
    ~FaultyHub() override;

    // Listens on 127.0.0.1 (port 0: any free port). Returns false if it cannot.
    bool start(quint16 port = 0);
    quint16 port() const { return m_port; }
    QString endpoint() const;

    // Adds a file to a repository (any revision is served). lfs: listed with lfs.oid (sha256)
    // and redirected to the CDN when enabled; otherwise listed with its git blob sha1 only.
    void addFile(const QString &repo, const QString &path, const QByteArray &content, bool lfs = true);
    // Deterministic pseudo-random content.
    static QByteArray randomContent(qint64 size, quint32 seed);
    static QString sha256Hex(const QByteArray &content);
    static QString gitBlobSha1Hex(const QByteArray &content);
    QByteArray content(const QString &repo, const QString &path) const;
    QStringList paths(const QString &repo) const;

    // path "": the file listing (its Status faults).
    void addFault(const QString &path, const FaultSpec &fault);
    // Every request for path answers this status (e.g. 404, or 500 forever for the attempt cap); 0 ends it.
    void setAlwaysStatus(const QString &path, int status);
    // The listing claims this sha256 for path (a hub whose listing is wrong).
    void setListedSha256(const QString &path, const QString &sha256);
    // The listing claims this size for path.
    void setListedSize(const QString &path, qint64 size);
    // Sends the listing in pages of n entries with Link: rel="next" (0: one page).
    void setListingPageSize(int n) { m_pageSize = n; }
    // LFS files are served from a second port through a 302 from the hub.
    bool enableCdn();
    // Body bytes are sent at most this fast per connection (0: as fast as possible).
    void setBytesPerSecond(qint64 rate) { m_rate = rate; }

    // Stops listening, drops every connection, listens again on the same port after downMs.
    void restart(int downMs);

    QList<Served> log() const { return m_log; }
    QList<Served> logFor(const QString &path) const;
    qint64 bytesSentFor(const QString &path) const;
    void clearLog() { m_log.clear(); }

private:
    struct RepoFile {
        QByteArray content;
        bool lfs = true;
        QString sha256;
        QString gitOid;
    };
    struct Conn;
    void onNewConnection(QTcpServer *server, const QString &name);
    void onReadable(Conn *c);
    void respond(Conn *c, const QByteArray &method, const QByteArray &target, const QHash<QByteArray, QByteArray> &headers);
    void serveListing(Conn *c, const QString &repo, int page);
    void serveFile(Conn *c, const QString &repo, const QString &path, const QHash<QByteArray, QByteArray> &headers);
    void sendSimple(Conn *c, int status, const QByteArray &body, const QList<QPair<QByteArray, QByteArray>> &extra = {});
    void pumpBody(Conn *c);
    void closeConn(Conn *c);
    bool listen(QTcpServer *server, quint16 port);

    QTcpServer *m_server = nullptr;
    QTcpServer *m_cdn = nullptr;
    quint16 m_port = 0;
    quint16 m_cdnPort = 0;
    QMap<QString, QMap<QString, RepoFile>> m_repos;
    QHash<QString, QList<FaultSpec>> m_faults;
    QHash<QString, int> m_always;
    QHash<QString, QString> m_listedSha;
    QHash<QString, qint64> m_listedSize;
    int m_pageSize = 0;
    qint64 m_rate = 0;
    QList<Conn *> m_conns;
    QList<Served> m_log;
    QElapsedTimer m_clock;
};
