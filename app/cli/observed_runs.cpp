#include "observed_runs.h"

#include "planner/observedspeeds.h"
#include "settings/datafolder.h"

#include <cstdio>

namespace cli {

std::string observedSpeedsFile()
{
    return (studioDataFolder() + QStringLiteral("/observed-speeds.json")).toStdString();
}

void recordRun(const std::string &container, const ObservedRun &run)
{
    ObservedSpeeds(QString::fromStdString(observedSpeedsFile())).record(QString::fromStdString(container), run);
}

void recordAnswer(const std::string &container, int64_t budget, const waste::GenResult &r, double readSecs,
                  double secs)
{
    const int64_t tokens = int64_t(r.tokens.size());
    const double decode = secs > readSecs ? double(tokens) / (secs - readSecs) : 0;
    recordRun(container, ObservedSpeeds::measured(budget, tokens, decode, r.promptTokens, readSecs));
}

RunCorrection runCorrection(const std::string &container, const std::function<double(int64_t)> &predictedDecode,
                            const std::function<double(int64_t)> &predictedPrefill)
{
    const ObservedSpeeds store(QString::fromStdString(observedSpeedsFile()));
    return ObservedSpeeds::correction(store.runs(QString::fromStdString(container)), predictedDecode, predictedPrefill);
}

void applyCorrection(waste::Forecast &fc, const RunCorrection &c)
{
    if (c.decodeRuns == 0)
        return;
    for (waste::BudgetForecast &b : fc.budgets)
        b.tok_per_s *= c.decode;
}

nlohmann::ordered_json correctionJson(const RunCorrection &c)
{
    nlohmann::ordered_json j;
    j["file"] = observedSpeedsFile();
    j["decode_runs"] = c.decodeRuns;
    j["decode_scale"] = c.decode;
    j["prefill_runs"] = c.prefillRuns;
    j["prefill_scale"] = c.prefill;
    return j;
}

void printCorrection(const RunCorrection &c)
{
    if (c.decodeRuns == 0 && c.prefillRuns == 0)
        return;
    std::printf("  corrected by this model's real runs on this machine:");
    if (c.decodeRuns > 0)
        std::printf(" decode measured %.2fx the calibration's forecast (%d run%s)", c.decode, c.decodeRuns,
                    c.decodeRuns == 1 ? "" : "s");
    if (c.prefillRuns > 0)
        std::printf("%s prompts read at %.2fx it (%d run%s)", c.decodeRuns > 0 ? ";" : "", c.prefill, c.prefillRuns,
                    c.prefillRuns == 1 ? "" : "s");
    std::printf("; --no-observed shows the forecast without them\n");
}

} // namespace cli
