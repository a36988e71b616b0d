// How an answer ended, in the words a ChatMessage keeps: the conversation store saves them
// and MessageView.qml shows them ("stop", "length", "cancelled", "context_full"; a failed
// answer keeps "error"). The engine's enum turns into these words here only.
#pragma once

#include <waste/waste.hpp>

#include <QString>

QString finishReasonText(waste::FinishReason reason);
