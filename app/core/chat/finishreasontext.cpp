#include "chat/finishreasontext.h"

QString finishReasonText(waste::FinishReason reason)
{
    switch (reason) {
    case waste::FinishReason::Stop:
        return QStringLiteral("stop");
    case waste::FinishReason::Length:
        return QStringLiteral("length");
    case waste::FinishReason::Cancelled:
        return QStringLiteral("cancelled");
    case waste::FinishReason::ContextFull:
        return QStringLiteral("context_full");
    }
    return QStringLiteral("stop");
}
