// A conversation's engine state on disk, so reopening it (also after a restart) continues
// from where it was instead of reading the whole history again. Two files: PATH holds the
// engine's state (waste::Model::saveState) and PATH.json what it holds (the StateHistory)
// and which model wrote it. A record of another model (or of the same path converted again)
// is ignored, and the engine itself refuses a state of other shapes.
#pragma once

#include "engine/statehistory.h"

#include <waste/prefix.hpp>
#include <waste/waste.hpp>

#include <QJsonObject>
#include <QString>

#include <optional>

namespace savedstate {

// Names the open model: its path, context length, the size and time of its manifest and
// trunk (a re-converted container is another model), and whether it computes with the
// release's trained rounding (its states differ from a plain-float open's).
QString modelIdentity(const QString &containerPath, int ctxTokens, bool trainedRounding = false);

// Writes the state and its record (the record last: a state without a record is ignored).
// Throws waste::Error / std::runtime_error when it cannot.
// extra: anything the caller keeps with the state (`waste chat` keeps its dialogue).
// parts: what of the engine state is written (waste/prefix.hpp); `history` and `position`
// (-1: the model's) describe what the written state holds.
void save(waste::Model &model, const QString &path, const StateHistory &history, const QString &identity,
          const QJsonObject &extra = {}, waste::SavedParts parts = waste::SavedParts::Everything, int position = -1);

struct Record {
    StateHistory history;
    int position = 0; // the engine position the state was saved at
    QJsonObject extra;
};
// The record of PATH when it was written by this model, else nothing.
std::optional<Record> readRecord(const QString &path, const QString &identity);

// Both files; a missing file is no error.
void remove(const QString &path);

// Keeps the `keep` most recently written states in `dir` (files named *.state) and removes
// the others and any state left without a record, so saved states (tens to hundreds of MB
// each for large models) do not grow without bound.
void prune(const QString &dir, int keep);

} // namespace savedstate
