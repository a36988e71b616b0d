// Every finished local answer of an engine, kept among its model's real runs on this machine
// (ObservedSpeeds): its decode speed when it wrote enough tokens to say, its prompt reading
// speed when it read a long enough prompt, with the budget it ran at. The app's Planner and
// `waste plan` correct their forecasts by them; the app and `waste serve` both record so.
#pragma once

#include <QString>

#include <functional>
#include <memory>

class EngineController;
class ObservedSpeeds;

// `recorded` (may be empty) runs after each run kept, with the model's path.
void recordAnswers(EngineController *engine, std::shared_ptr<ObservedSpeeds> observed,
                   std::function<void(const QString &model)> recorded = {});
