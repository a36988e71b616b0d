// TokenCount: one count of a conversation's tokens (EngineController::countDialogue) as its
// caller sees it: only this count's answer arrives here. The controller owns it and deletes
// it (later) after the answer; a caller that no longer wants an answer disconnects from it.
#pragma once

#include <QObject>

class TokenCount : public QObject {
    Q_OBJECT
Q_SIGNALS:
    // The prompt's tokens, or -1 when the dialogue cannot be rendered or no model is open.
    void counted(int tokens);

private:
    friend class EngineController;
    explicit TokenCount(QObject *parent) : QObject(parent) {}
};
