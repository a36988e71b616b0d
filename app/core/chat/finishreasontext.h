// How an answer ended, in the words a ChatMessage keeps: the conversation store saves them
// and MessageView.qml shows them ("stop", "length", "cancelled", "context_full"; a failed
// answer keeps "error"; an answer the app never finished, kInterrupted). The engine's enum
// turns into these words here only.
#pragma once

#include <waste/waste.hpp>

#include <QString>

QString finishReasonText(waste::FinishReason reason);

// An answer under way as the store last saw it: if the app stopped before the end, it stays so.
inline constexpr char kInterrupted[] = "interrupted";
