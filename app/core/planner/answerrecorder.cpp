#include "planner/answerrecorder.h"

#include "engine/enginecontroller.h"
#include "planner/observedspeeds.h"

#include "engine/generationhandle.h"

void recordAnswers(EngineController *engine, std::shared_ptr<ObservedSpeeds> observed,
                   std::function<void(const QString &model)> recorded)
{
    QObject::connect(engine, &EngineController::generationQueued, engine,
                     [engine, observed, recorded](GenerationHandle *h) {
                         QObject::connect(h, &GenerationHandle::finished, engine,
                                          [engine, observed, recorded](const GenerationResult &r) {
                             if (engine->isRemote() || engine->modelPath().isEmpty())
                                 return;
                             const GenerationStats &st = r.stats;
                             const ObservedRun run =
                                 ObservedSpeeds::measured(engine->budgetBytes(), st.completionTokens, st.tokensPerSecond,
                                                          st.prefilledTokens, st.prefillSeconds);
                             if (run.decodeTokPerS <= 0 && run.prefillTokPerS <= 0)
                                 return;
                             observed->record(engine->modelPath(), run);
                             if (recorded)
                                 recorded(engine->modelPath());
                         });
                     });
}
