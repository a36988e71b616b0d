// ReleasePlanController: will a release run on this machine, and how fast, before it is
// downloaded. Fetches the repository's config.json from the hub (a few KB), plans the
// container `waste convert` would make from it (waste::planRelease: floor, default budget,
// cliff) and prices a token with this machine's compute calibration and the speed of the
// disk the models folder is on. "Compare machines" shows the same plan on 16 to 128 GiB.
// Everything slow runs off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QTimer>
#include <QVariantList>

#include "planner/plannercontroller.h"
#include "planner/releaseplansource.h"

#include <memory>

class QNetworkReply;

class ReleasePlanController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString repo READ repo WRITE setRepo NOTIFY repoChanged)
    // Hub endpoint; empty: HF_ENDPOINT, else the public hub.
    Q_PROPERTY(QString endpoint READ endpoint WRITE setEndpoint NOTIFY repoChanged)
    // What the source download takes (a preset's listed size; 0: not known yet).
    Q_PROPERTY(qint64 sourceBytes READ sourceBytes WRITE setSourceBytes NOTIFY planChanged)
    // 0: this machine; otherwise a machine with this much RAM.
    Q_PROPERTY(qint64 machineRam READ machineRam WRITE setMachineRam NOTIFY planChanged)
    // [{label, bytes}]: this machine, then 16, 32, 64 and 128 GiB.
    Q_PROPERTY(QVariantList machines READ machines CONSTANT)
    // The longest of their labels, which the Compare box is sized to.
    Q_PROPERTY(QString widestMachineLabel READ widestMachineLabel CONSTANT)
    Q_PROPERTY(State state READ state NOTIFY planChanged)
    Q_PROPERTY(bool fits READ fits NOTIFY planChanged)
    // One line: "On this machine: floor X, default Y, about Z tok/s from this disk" or
    // "Will not fit: needs X of RAM / Y of disk".
    Q_PROPERTY(QString headline READ headline NOTIFY planChanged)
    // Where the cliff lies and what more RAM would give.
    Q_PROPERTY(QString details READ details NOTIFY planChanged)
    Q_PROPERTY(QString error READ error NOTIFY planChanged)
    // The ways to store the experts side by side, VQ3R first, then the release's own format
    // when it has one: [{format, containerBytes, recordBytes, bytesPerToken, floor,
    // defaultBudget, tokPerS}] on the chosen machine.
    Q_PROPERTY(QVariantList layouts READ layouts NOTIFY planChanged)
    // The layouts table's cells, row by row ({text, name, first}): six per layout.
    Q_PROPERTY(QVariantList layoutCells READ layoutCells NOTIFY planChanged)
    // The Planner's chart for the release as Convert makes it (floor, default, paging cliff,
    // predicted tokens/s and hit rate along the budget), on the chosen machine: a planner of
    // its own over the release's config (ReleasePlanSource). Drawn when chartShown.
    Q_PROPERTY(PlannerController *chart READ chart CONSTANT)
    Q_PROPERTY(bool chartShown READ chartShown NOTIFY planChanged)

public:
    enum State { Idle, Fetching, Planning, Ready, Failed };
    Q_ENUM(State)

    explicit ReleasePlanController(QObject *parent = nullptr);
    ~ReleasePlanController() override;

    QString repo() const { return m_repo; }
    void setRepo(const QString &repo);
    QString endpoint() const { return m_endpoint; }
    void setEndpoint(const QString &endpoint);
    qint64 sourceBytes() const { return m_sourceBytes; }
    void setSourceBytes(qint64 bytes);
    qint64 machineRam() const { return m_machineRam; }
    void setMachineRam(qint64 bytes);
    QVariantList machines() const;
    QString widestMachineLabel() const;
    State state() const { return m_state; }
    bool fits() const { return m_fits; }
    QString headline() const { return m_headline; }
    QString details() const { return m_details; }
    QString error() const { return m_error; }
    QVariantList layouts() const { return m_layouts; }
    QVariantList layoutCells() const { return m_layoutCells; }
    PlannerController *chart() const { return m_chart; }
    bool chartShown() const { return m_chartShown; }

    // Plans from a config.json's text (what the hub answered, or a local file in tests).
    Q_INVOKABLE void planConfig(const QByteArray &configJson);

    // The plan's sentences, from the numbers alone (public for tests).
    struct LayoutFigures {
        QString format;
        qint64 containerBytes = 0, recordBytes = 0, bytesPerToken = 0, floor = 0, defaultBudget = 0;
        double tokPerS = 0; // 0: disk speed not known
    };
    struct Figures {
        QList<LayoutFigures> layouts;         // VQ3R, then native when the release has its own format
        bool fits = true;
        qint64 floor = 0, defaultBudget = 0, cliff = 0, usable = 0, physical = 0;
        qint64 diskNeeded = 0, diskFree = -1; // -1: not known
        double tokPerS = 0;                   // 0: disk speed not known
        bool onThisMachine = true;
        QString madeFormat;                   // the experts of the container Convert makes by default
        QString otherFormat;                  // the other choice (VQ3R where the default keeps the release's)
        qint64 otherFloor = 0;
        qint64 otherContainer = 0;
        // The smallest machine size up where the release first fits or runs at least twice as
        // fast (0: none), and its default; the largest size tried, for "more RAM would not help".
        qint64 largerRam = 0, largerDefault = 0;
        double largerTokPerS = 0;
        qint64 largestRam = 0;
        double largestTokPerS = 0;
        QString error;                        // the plan could not be made
        QString decodeScaleFallback;          // why the decode was not measured: tok/s likely too high
    };
    static QString headlineFor(const Figures &f);
    static QString detailsFor(const Figures &f);

Q_SIGNALS:
    void repoChanged();
    void planChanged();

private:
    void fetch();
    void onFetched(QNetworkReply *reply, int redirects);
    void setState(State s);

    QString m_repo;
    QString m_endpoint;
    qint64 m_sourceBytes = 0;
    qint64 m_machineRam = 0;
    State m_state = Idle;
    bool m_fits = true;
    QString m_headline, m_details, m_error;
    QVariantList m_layouts;
    QVariantList m_layoutCells;
    std::shared_ptr<ReleasePlanSource> m_chartSource;
    PlannerController *m_chart = nullptr;
    bool m_chartShown = false;
    QByteArray m_config;
    QNetworkAccessManager m_network;
    QPointer<QNetworkReply> m_reply;
    QFutureWatcher<Figures> m_watcher;
    QTimer m_typing; // a repository typed letter by letter is fetched once, when typing pauses
    bool m_again = false;
};
