// What real runs of a model measured on this machine, so the Planner's forecast corrects itself
// (issue 36 item 8): a calibration taken while the machine was busy, or a kind of CPU the
// estimate was not tuned on, stops mattering after a few answers. Each finished answer adds
// its decode tok/s (when it wrote enough tokens to say) and its prompt reading tok/s (when it
// read a long enough prompt), with the budget it ran at; the last kKept per model are kept in
// a JSON file named for this machine (waste::calibrationMachineKey), so a file copied from
// another machine, or written before the CPU changed, is ignored.
//
// The correction is the median, over the runs, of measured / predicted at each run's budget:
// the forecast's whole curve is scaled by it, and the Planner says how many runs it rests on.
#pragma once

#include <QList>
#include <QString>

#include <functional>

struct ObservedRun {
    qint64 budget = 0;
    double decodeTokPerS = 0;  // 0: the answer was too short to say
    double prefillTokPerS = 0; // 0: the prompt was too short to say
};

class ObservedSpeeds {
public:
    explicit ObservedSpeeds(QString file);

    static constexpr int kKept = 16;
    // What an answer must have for its speed to count.
    static constexpr int kMinDecodeTokens = 16;
    static constexpr int kMinPrefillTokens = 256;

    // A run's speeds from what it measured, each only where it is long enough to say (else 0):
    // the one rule for the app's answers and the command line's runs.
    static ObservedRun measured(qint64 budget, qint64 decodeTokens, double decodeTokPerS, qint64 promptTokens,
                                double promptSeconds);
    // Appends a run of `container` and writes the file (quietly does nothing when it cannot,
    // or when the run measured nothing).
    void record(const QString &container, const ObservedRun &run);
    QList<ObservedRun> runs(const QString &container) const;

    struct Correction {
        double decode = 1, prefill = 1; // measured / predicted, median over the runs
        int decodeRuns = 0, prefillRuns = 0;
    };
    // predicted*: the uncorrected forecast at a budget (<= 0: none there, the run is skipped).
    static Correction correction(const QList<ObservedRun> &runs, const std::function<double(qint64)> &predictedDecode,
                                 const std::function<double(qint64)> &predictedPrefill);

private:
    QString m_file;
};
