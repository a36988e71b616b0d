// PlannerController: the Planner page's numbers. Asks a PlanSource (the engine's planner)
// for the model's floor and the machine's limits at the chosen context, and for predicted
// tokens/s and hit rate over a row of budgets; all of that runs off the GUI thread. The
// chosen budget belongs to the container it was chosen for (AppSettings::budgetFor); when
// that container is the open model, using it re-opens the model at that budget.
#pragma once

#include "planner/observedspeeds.h"
#include "planner/planfacts.h"
#include "singleton/appsingleton.h"

#include <QFutureWatcher>
#include <QObject>
#include <QQmlEngine>
#include <QVariantList>

#include <memory>

class PlannerController : public QObject, public AppSingleton<PlannerController> {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(QString container READ container WRITE setContainer NOTIFY containerChanged)
    Q_PROPERTY(int contextTokens READ contextTokens WRITE setContextTokens NOTIFY containerChanged)
    // The contexts the Planner offers ("4K" ... "1M") and which one is planned (the first
    // when the planned context is none of them).
    Q_PROPERTY(QStringList contextNames READ contextNames CONSTANT)
    Q_PROPERTY(int contextIndex READ contextIndex WRITE setContextIndex NOTIFY containerChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(bool ready READ ready NOTIFY planChanged)
    Q_PROPERTY(QString error READ error NOTIFY planChanged)
    Q_PROPERTY(qint64 trunkBytes READ trunkBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 stateBytes READ stateBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 scratchBytes READ scratchBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 minExpertCacheBytes READ minExpertCacheBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 visionBytes READ visionBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 floorBytes READ floorBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 defaultBytes READ defaultBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 recommendedBytes READ recommendedBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 capBytes READ capBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 physicalBytes READ physicalBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 otherBytes READ otherBytes NOTIFY planChanged)
    // Physical RAM less what other programs hold: where the chart marks them.
    Q_PROPERTY(qint64 besideOthersBytes READ besideOthersBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 cliffBytes READ cliffBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 axisMinBytes READ axisMinBytes NOTIFY planChanged)
    Q_PROPERTY(qint64 axisMaxBytes READ axisMaxBytes NOTIFY planChanged)
    // [{budget, tokensPerSecond, hitRate, pastCliff}], budget ascending.
    Q_PROPERTY(QVariantList points READ points NOTIFY planChanged)
    Q_PROPERTY(double maxTokensPerSecond READ maxTokensPerSecond NOTIFY planChanged)
    Q_PROPERTY(qint64 budget READ budget WRITE setBudget NOTIFY budgetChanged)
    Q_PROPERTY(QString budgetSentence READ budgetSentence NOTIFY budgetChanged)
    Q_PROPERTY(int budgetLevel READ budgetLevel NOTIFY budgetChanged) // 0 ok, 1 warning, 2 danger
    Q_PROPERTY(bool budgetApplied READ budgetApplied NOTIFY budgetChanged)
    // The budget saved for this container (0: the engine's default) and what it means now.
    Q_PROPERTY(qint64 savedBudgetBytes READ savedBudgetBytes NOTIFY budgetChanged)
    Q_PROPERTY(QString savedBudgetText READ savedBudgetText NOTIFY budgetChanged)
    // True while the open model re-opens at a newly applied budget.
    Q_PROPERTY(bool reopening READ reopening NOTIFY reopeningChanged)
    // One plain sentence about the paging cliff for this model on this machine.
    Q_PROPERTY(QString cliffText READ cliffText NOTIFY planChanged)
    Q_PROPERTY(bool cliffInRange READ cliffInRange NOTIFY planChanged)
    Q_PROPERTY(QString computeText READ computeText NOTIFY planChanged)
    // Non-empty when part of the compute calibration could not be measured: what that means.
    Q_PROPERTY(QString computeWarning READ computeWarning NOTIFY calibrationChanged)
    Q_PROPERTY(bool calibrating READ calibrating NOTIFY calibrationChanged)
    Q_PROPERTY(bool measuringDisk READ measuringDisk NOTIFY diskChanged)
    Q_PROPERTY(double diskGBps READ diskGBps NOTIFY diskChanged)
    Q_PROPERTY(QString diskText READ diskText NOTIFY diskChanged)

public:
    // No default argument: Qt 6.4 prefers a default constructor over create() for QML singletons.
    PlannerController(std::shared_ptr<PlanSource> source, QObject *parent);
    ~PlannerController() override;

    QString container() const { return m_container; }
    void setContainer(const QString &path);
    int contextTokens() const { return m_ctx; }
    void setContextTokens(int tokens);
    static QStringList contextNames();
    int contextIndex() const;
    void setContextIndex(int index);
    bool busy() const { return m_busy; }
    bool ready() const { return m_facts.floor > 0; }
    QString error() const { return m_error; }
    const PlanFacts &facts() const { return m_facts; }
    qint64 trunkBytes() const { return m_facts.trunk; }
    qint64 stateBytes() const { return m_facts.state; }
    qint64 scratchBytes() const { return m_facts.scratch; }
    qint64 minExpertCacheBytes() const { return m_facts.minExpertCache; }
    qint64 visionBytes() const { return m_facts.vision; }
    qint64 floorBytes() const { return m_facts.floor; }
    qint64 defaultBytes() const { return m_facts.defaultBudget; }
    qint64 recommendedBytes() const { return m_facts.recommended; }
    qint64 capBytes() const { return m_facts.cap; }
    qint64 physicalBytes() const { return m_facts.physical; }
    qint64 otherBytes() const { return m_facts.other; }
    qint64 besideOthersBytes() const { return m_facts.physical - m_facts.other; }
    qint64 cliffBytes() const { return m_facts.cliff; }
    qint64 axisMinBytes() const { return m_axisMin; }
    qint64 axisMaxBytes() const { return m_axisMax; }
    QVariantList points() const;
    const QList<ForecastPoint> &forecast() const { return m_points; }
    double maxTokensPerSecond() const;
    // Predicted prompt reading at the chosen budget, tokens per second (forecast.prefill); 0: not known.
    double prefillTokensPerSecond() const;
    qint64 budget() const { return m_budget; }
    void setBudget(qint64 bytes);
    QString budgetSentence() const { return describe(m_budget); }
    int budgetLevel() const;
    bool budgetApplied() const;
    qint64 savedBudgetBytes() const;
    QString savedBudgetText() const;
    bool reopening() const { return m_reopening; }
    QString cliffText() const;
    bool cliffInRange() const;
    QString computeText() const;
    QString computeWarning() const { return m_calibrationWarning; }
    bool calibrating() const { return m_calibrating; }
    bool measuringDisk() const { return m_measuring; }
    double diskGBps() const { return m_disk.gbPerSecond; }
    QString diskText() const;

    // One sentence saying what a budget means on this machine.
    Q_INVOKABLE QString describe(qint64 budget) const;
    // The forecast at a budget (linear between the computed points).
    Q_INVOKABLE QVariantMap predictionAt(qint64 budget) const;
    // The width of one part of the floor in a bar `barWidth` px wide that stacks them all:
    // its share of the floor, at least 2 px so the smallest part still shows; 0 before there
    // is a floor.
    Q_INVOKABLE double floorPartWidth(qint64 partBytes, double barWidth) const;
    // Keeps the chosen budget for this container (the default is kept as 0: the engine
    // chooses); when the container is the open model, re-opens it at that budget. A budget
    // below the floor at the chosen context is refused.
    Q_INVOKABLE void applyBudget();
    // Runs the compute calibration again, then re-plans.
    Q_INVOKABLE void recalibrate();
    Q_INVOKABLE void useDefaultBudget();
    Q_INVOKABLE void measureDisk();
    Q_INVOKABLE void refresh();
    // Real runs of the models on this machine: the forecast is scaled by what they measured
    // (observedspeeds.h); null: the calibration's figures alone.
    void setObservedSpeeds(std::shared_ptr<ObservedSpeeds> observed);
    // How many runs corrected the figures, and by how much, in words; empty: none did.
    QString observedText() const;

Q_SIGNALS:
    void containerChanged();
    void busyChanged();
    void planChanged();
    void budgetChanged();
    void diskChanged();
    void reopeningChanged();
    void calibrationChanged();

private:
    struct Result {
        PlanFacts facts;
        QList<ForecastPoint> points;
        QString error;
        CalibrationReport calibration;
    };
    void setBusy(bool busy);
    void onPlanned();

    std::shared_ptr<PlanSource> m_source;
    std::shared_ptr<ObservedSpeeds> m_observed;
    ObservedSpeeds::Correction m_correction;
    void applyObserved();
    QString m_container;
    int m_ctx = 4096;
    bool m_busy = false;
    bool m_again = false;
    QString m_error;
    PlanFacts m_facts;
    QList<ForecastPoint> m_points;
    qint64 m_axisMin = 0;
    qint64 m_axisMax = 0;
    qint64 m_budget = 0;
    bool m_measuring = false;
    DiskMeasurement m_disk;
    QFutureWatcher<Result> m_planWatcher;
    QFutureWatcher<DiskMeasurement> m_diskWatcher;
    QFutureWatcher<CalibrationReport> m_calibrationWatcher;
    bool m_reopening = false;
    bool m_calibrating = false;
    QString m_calibrationText;
    QString m_calibrationWarning;
};
