// ConversionJob: runs the engine's converter (waste/convert.hpp) on a worker thread for
// the Convert page. plan() inspects the source and the target (sizes, free space, what
// an earlier interrupted run left), start() converts with progress signals batched for
// the GUI thread, cancel() stops after the current expert; start() again resumes. plan()
// also lays out the expert encodings side by side (waste::expertOptions) with this
// machine's measured speeds, and expertEncoding is the person's choice among them.
#pragma once

#include <QFuture>
#include <QObject>
#include <QQmlEngine>
#include <QString>
#include <QVariantList>

#include <atomic>
#include <memory>

namespace waste { struct ConvertRates; }

class ConversionJob : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString sourceDir READ sourceDir WRITE setSourceDir NOTIFY settingsChanged)
    Q_PROPERTY(QString outputDir READ outputDir WRITE setOutputDir NOTIFY settingsChanged)
    Q_PROPERTY(int trunkBits READ trunkBits WRITE setTrunkBits NOTIFY settingsChanged)
    Q_PROPERTY(bool reclaim READ reclaim WRITE setReclaim NOTIFY settingsChanged)
    Q_PROPERTY(int jobs READ jobs WRITE setJobs NOTIFY settingsChanged)
    // How routed experts are stored: "native", "vq3r", "q4", or "" for the release's default.
    Q_PROPERTY(QString expertEncoding READ expertEncoding WRITE setExpertEncoding NOTIFY settingsChanged)
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)
    Q_PROPERTY(QString errorText READ errorText NOTIFY stateChanged)
    // From plan():
    Q_PROPERTY(bool planned READ planned NOTIFY planChanged)
    Q_PROPERTY(QString arch READ arch NOTIFY planChanged)
    Q_PROPERTY(int layers READ layers NOTIFY planChanged)
    Q_PROPERTY(int moeLayers READ moeLayers NOTIFY planChanged)
    Q_PROPERTY(int experts READ experts NOTIFY planChanged)
    Q_PROPERTY(qint64 sourceBytes READ sourceBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 outputBytes READ outputBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 remainingBytes READ remainingBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 freeBytes READ freeBytes NOTIFY planChanged)
    Q_PROPERTY(bool enoughSpace READ enoughSpace NOTIFY planChanged)
    Q_PROPERTY(int unitsDone READ unitsDone NOTIFY planChanged)
    Q_PROPERTY(int unitsTotal READ unitsTotal NOTIFY planChanged)
    Q_PROPERTY(bool alreadyComplete READ alreadyComplete NOTIFY planChanged)
    Q_PROPERTY(QString expertFormat READ expertFormat NOTIFY planChanged)
    Q_PROPERTY(qint64 recordBytes READ recordBytes NOTIFY planChanged)
    // The expert encodings side by side, from plan(): [{key, format, available, isDefault,
    // discouraged, exact, recordBytes, outputBytes, bytesPerToken, topK, weightError,
    // quality, advice, estimatedSeconds}] for native, vq3r and q4.
    Q_PROPERTY(QVariantList expertOptions READ expertOptions NOTIFY planChanged)
    // The key of the option a Start would use ("native", "vq3r" or "q4").
    Q_PROPERTY(QString chosenExperts READ chosenExperts NOTIFY planChanged)
    // This machine's speeds the estimates use (bytes/s; 0 when not measured).
    Q_PROPERTY(double diskBytesPerSecond READ diskBytesPerSecond NOTIFY planChanged)
    Q_PROPERTY(double diskWriteBytesPerSecond READ diskWriteBytesPerSecond NOTIFY planChanged)
    Q_PROPERTY(bool diskDirect READ diskDirect NOTIFY planChanged)
    Q_PROPERTY(int encodeJobs READ encodeJobs NOTIFY planChanged)
    // An interrupted run left finished parts in the output folder: Start resumes it.
    Q_PROPERTY(bool canResume READ canResume NOTIFY planChanged)
    // While running:
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(int currentLayer READ currentLayer NOTIFY progressChanged)
    Q_PROPERTY(int currentUnit READ currentUnit NOTIFY progressChanged)
    Q_PROPERTY(QString phase READ phase NOTIFY progressChanged)
    Q_PROPERTY(QString tensor READ tensor NOTIFY progressChanged)
    Q_PROPERTY(double etaSeconds READ etaSeconds NOTIFY progressChanged)
    Q_PROPERTY(double bytesPerSecond READ bytesPerSecond NOTIFY progressChanged)
    Q_PROPERTY(bool resumed READ resumed NOTIFY progressChanged)

public:
    enum State { Idle, Planning, Ready, Running, Cancelling, Finished, Cancelled, Failed };
    Q_ENUM(State)

    explicit ConversionJob(QObject *parent = nullptr);
    ~ConversionJob() override;

    QString sourceDir() const { return m_source; }
    void setSourceDir(const QString &v);
    QString outputDir() const { return m_output; }
    void setOutputDir(const QString &v);
    int trunkBits() const { return m_trunkBits; }
    void setTrunkBits(int v);
    bool reclaim() const { return m_reclaim; }
    void setReclaim(bool v);
    int jobs() const { return m_jobs; }
    void setJobs(int v);
    QString expertEncoding() const { return m_encoding; }
    void setExpertEncoding(const QString &v);

    State state() const { return m_state; }
    bool busy() const { return m_state == Planning || m_state == Running || m_state == Cancelling; }
    QString errorText() const { return m_error; }

    bool planned() const { return m_planned; }
    QString arch() const { return m_arch; }
    int layers() const { return m_layers; }
    int moeLayers() const { return m_moeLayers; }
    int experts() const { return m_experts; }
    qint64 sourceBytes() const { return m_sourceBytes; }
    qint64 outputBytes() const { return m_outputBytes; }
    qint64 remainingBytes() const { return m_remainingBytes; }
    qint64 freeBytes() const { return m_freeBytes; }
    bool enoughSpace() const { return m_freeBytes >= m_remainingBytes; }
    int unitsDone() const { return m_unitsDone; }
    int unitsTotal() const { return m_unitsTotal; }
    bool alreadyComplete() const { return m_alreadyComplete; }
    QString expertFormat() const { return m_expertFormat; }
    qint64 recordBytes() const { return m_recordBytes; }
    QVariantList expertOptions() const { return m_expertOptions; }
    QString chosenExperts() const;
    double diskBytesPerSecond() const { return m_diskRate; }
    double diskWriteBytesPerSecond() const { return m_diskWriteRate; } // 0: not measured
    bool diskDirect() const { return m_diskDirect; }
    int encodeJobs() const { return m_encodeJobs; }
    bool canResume() const { return m_planned && !m_alreadyComplete && m_unitsDone > 0 && m_unitsDone < m_unitsTotal; }

    double progress() const { return m_progress; }
    int currentLayer() const { return m_layer; }
    int currentUnit() const { return m_unit; }
    QString phase() const { return m_phase; }
    QString tensor() const { return m_tensor; }
    double etaSeconds() const { return m_eta; }
    double bytesPerSecond() const { return m_rate; }
    bool resumed() const { return m_resumed; }

    // A default output folder for a source folder: "<source>.waste" next to it.
    Q_INVOKABLE QString suggestOutput(const QString &source) const;
    // The Convert page opened for a source (a finished download): the source, the suggested
    // output folder, and the plan, so the person only has to press Start.
    Q_INVOKABLE void prepare(const QString &source);
    Q_INVOKABLE void plan();
    Q_INVOKABLE void start();
    Q_INVOKABLE void cancel();

Q_SIGNALS:
    void settingsChanged();
    void stateChanged();
    void planChanged();
    void progressChanged();
    void finished(bool ok);

private:
    void setState(State s, const QString &error = {});
    struct Snapshot;
    void applySnapshot(const Snapshot &s);

    QString m_source, m_output, m_encoding;
    int m_trunkBits = 4;
    bool m_reclaim = false;
    int m_jobs = 0;
    State m_state = Idle;
    QString m_error;
    bool m_planned = false, m_alreadyComplete = false;
    QString m_arch, m_expertFormat;
    qint64 m_recordBytes = 0;
    QVariantList m_expertOptions;
    // The machine's measured rates and what they were measured for (source, output, jobs):
    // choosing another encoding re-plans without reading and writing the disk again.
    std::shared_ptr<const waste::ConvertRates> m_rates;
    QString m_ratesKey;
    double m_diskRate = 0;
    double m_diskWriteRate = 0;
    bool m_diskDirect = false;
    int m_encodeJobs = 0;
    int m_layers = 0, m_moeLayers = 0, m_experts = 0, m_unitsDone = 0, m_unitsTotal = 0;
    qint64 m_sourceBytes = 0, m_outputBytes = 0, m_remainingBytes = 0, m_freeBytes = 0;
    double m_progress = 0, m_eta = -1, m_rate = 0;
    int m_layer = -1, m_unit = 0;
    QString m_phase, m_tensor;
    bool m_resumed = false;
    std::shared_ptr<std::atomic<bool>> m_cancel = std::make_shared<std::atomic<bool>>(false);
    QFuture<void> m_future;
};
