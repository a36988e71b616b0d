// waste download REPO --dest DIR [--endpoint URL] [--revision REV] [--include GLOB]...
// The GUI's downloader from the command line: same resume, backoff, verification and queue.
// The queue lives beside the files (DIR/.waste-download.json), so after a crash or kill -9
// the same command continues where it was. Exit 0 only when every file is verified.
#include "verb.h"

#include "download/downloadmanager.h"
#include "download/hubendpoint.h"
#include "units/units.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <cstdio>
#include <stdexcept>
#include <unistd.h>

namespace {

qint64 parseRate(const std::string &text)
{
    // "20M" = 20 MiB/s, "500K", "1G", or bytes per second.
    std::string t = text;
    if (!t.empty() && (t.back() == 's' || t.back() == 'S') && t.size() > 2 && t[t.size() - 2] == '/')
        t.resize(t.size() - 2);
    qint64 mult = 1;
    if (!t.empty()) {
        switch (std::toupper(static_cast<unsigned char>(t.back()))) {
        case 'K': mult = 1024; break;
        case 'M': mult = 1024 * 1024; break;
        case 'G': mult = 1024LL * 1024 * 1024; break;
        default: break;
        }
        if (mult != 1)
            t.pop_back();
    }
    try {
        size_t used = 0;
        const double v = std::stod(t, &used);
        if (used != t.size() || v < 0)
            throw std::invalid_argument(t);
        return static_cast<qint64>(v * mult);
    } catch (const std::exception &) {
        throw cli::UsageError("--limit takes a rate such as 20M (per second), 500K or bytes");
    }
}

QString progressLine(const DownloadManager &m)
{
    const DownloadSnapshot &s = m.snapshot();
    if (s.state == JobState::Listing)
        return QStringLiteral("listing %1 ...").arg(s.repo);
    const double pct = s.totalBytes > 0 ? 100.0 * s.doneBytes / s.totalBytes : 0;
    QString line = QStringLiteral("[%1%] %2 / %3 · %4 of %5 files")
                       .arg(pct, 5, 'f', 1)
                       .arg(Units::bytes(s.doneBytes), Units::bytes(s.totalBytes))
                       .arg(s.doneFiles)
                       .arg(s.files.size());
    if (s.state == JobState::Running) {
        line += QStringLiteral(" · %1").arg(Units::rate(s.speed));
        if (s.etaSeconds >= 0)
            line += QStringLiteral(" · %1 left").arg(Units::duration(s.etaSeconds));
    }
    if (s.retries > 0)
        line += QStringLiteral(" · %1 retries").arg(s.retries);
    if (s.failedFiles > 0)
        line += QStringLiteral(" · %1 failed").arg(s.failedFiles);
    return line;
}

int runDownload(const cli::Args &args)
{
    const QString repo = HubEndpoint::normalizeRepo(QString::fromStdString(args.positional(0)));
    if (repo.isEmpty())
        throw cli::UsageError("'" + args.positional(0) + "' is not a repository id (owner/name)");
    const auto dest = args.value("--dest");
    if (!dest || dest->empty())
        throw cli::UsageError("--dest DIR is required");

    JobSpec spec;
    spec.repo = repo;
    spec.revision = QString::fromStdString(args.text("--revision", "main"));
    spec.endpoint = HubEndpoint::resolve(QString::fromStdString(args.text("--endpoint", "")));
    spec.dest = QDir::cleanPath(QDir::current().absoluteFilePath(QString::fromStdString(*dest)));
    for (const std::string &g : args.values("--include"))
        spec.include << QString::fromStdString(g);
    spec.countContainer = !args.flag("--no-container-space");
    try {
        HubEndpoint check(spec.endpoint);
    } catch (const std::exception &e) {
        throw cli::UsageError(e.what());
    }

    DownloadManager::Config cfg;
    cfg.queuePath = spec.dest + QStringLiteral("/.waste-download.json");
    cfg.options = DownloadOptions::fromEnvironment();
    if (args.value("--jobs"))
        cfg.options.parallelFiles = static_cast<int>(args.integer("--jobs", cfg.options.parallelFiles));
    if (const auto limit = args.value("--limit"))
        cfg.options.bandwidthLimit = parseRate(*limit);
    cfg.options = cfg.options.clamped();
    cfg.autoResume = false;
    cfg.token = HubEndpoint::resolveToken({});
    cfg.endpoint = spec.endpoint;
    QDir().mkpath(spec.dest);

    const bool tty = isatty(STDERR_FILENO);
    const bool json = args.flag("--json");
    DownloadManager manager(cfg, nullptr);
    bool ok = false;
    QString summary;
    int lastLen = 0;
    const auto printProgress = [&](bool final) {
        const QByteArray line = progressLine(manager).toUtf8();
        if (tty) {
            std::fprintf(stderr, "\r%s%*s", line.constData(), qMax(0, lastLen - static_cast<int>(line.size())), "");
            lastLen = static_cast<int>(line.size());
            if (final)
                std::fputc('\n', stderr);
        } else {
            std::fprintf(stderr, "%s\n", line.constData());
        }
        std::fflush(stderr);
    };
    QObject::connect(&manager, &DownloadManager::event, [&](const QString &path, const QString &message) {
        if (message.startsWith(QLatin1String("verified")) && !tty)
            return; // one line per file is noise in a log; the progress line counts them
        const QByteArray text = (path.isEmpty() ? message : path + QStringLiteral(": ") + message).toUtf8();
        if (tty && lastLen > 0)
            std::fprintf(stderr, "\r%*s\r", lastLen, "");
        lastLen = 0;
        std::fprintf(stderr, "%s\n", text.constData());
    });
    QObject::connect(&manager, &DownloadManager::finished, [&](bool good, const QString &text) {
        ok = good;
        summary = text;
        QCoreApplication::exit(0);
    });
    QTimer progress;
    progress.setInterval(tty ? 250 : 2000);
    QObject::connect(&progress, &QTimer::timeout, [&] { printProgress(false); });
    progress.start();
    manager.startJob(spec);
    QCoreApplication::exec();
    progress.stop();
    printProgress(true);

    if (json) {
        const DownloadSnapshot &s = manager.snapshot();
        QJsonArray failed;
        for (const FileSnapshot &f : s.files)
            if (f.state != FileState::Done)
                failed.append(QJsonObject{{QStringLiteral("path"), f.path}, {QStringLiteral("state"), fileStateName(f.state)}, {QStringLiteral("reason"), f.reason}});
        const QJsonObject out{{QStringLiteral("repo"), s.repo},
                              {QStringLiteral("revision"), s.revision},
                              {QStringLiteral("dest"), s.dest},
                              {QStringLiteral("files"), static_cast<qint64>(s.files.size())},
                              {QStringLiteral("verified"), s.doneFiles},
                              {QStringLiteral("bytes"), s.totalBytes},
                              {QStringLiteral("transferred"), s.transferredBytes},
                              {QStringLiteral("retries"), s.retries},
                              {QStringLiteral("ok"), ok},
                              {QStringLiteral("not_verified"), failed}};
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    }
    if (!ok)
        throw std::runtime_error(summary.toStdString());
    std::fprintf(stderr, "%s\n", summary.toUtf8().constData());
    return 0;
}

} // namespace

WASTE_CLI_VERB({"download",
                "REPO --dest DIR [--endpoint URL] [--revision REV] [--include GLOB]... [--jobs N] [--limit RATE] [--json]",
                "download a model repository from the hub: resumable, verified, safe to kill and rerun",
                {{{"--dest", cli::OptionKind::Value, "DIR  folder the files go into (created if needed)"},
                  {"--endpoint", cli::OptionKind::Value, "URL  hub to use (default: HF_ENDPOINT, else https://huggingface.co)"},
                  {"--revision", cli::OptionKind::Value, "REV  branch, tag or commit (default main)"},
                  {"--include", cli::OptionKind::Repeated, "GLOB  only files matching (repeatable; * matches across folders)"},
                  {"--jobs", cli::OptionKind::Value, "N  files at once, 1-4 (default 3)"},
                  {"--limit", cli::OptionKind::Value, "RATE  bandwidth limit per second, e.g. 20M (default none)"},
                  {"--no-container-space", cli::OptionKind::Flag, "space check counts only the download, not the container it becomes"},
                  {"--json", cli::OptionKind::Flag, "print a JSON summary on stdout"}},
                 1,
                 1},
                &runDownload});
