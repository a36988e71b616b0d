// ModelTie: how the open conversation stands to the model open in the engine. A conversation
// is tied to the model it was made with (Conversation::modelPath); opened while another model
// (or none) is open, the chat offers to open its model, or says that the model is gone and
// lets the person continue with the open one. Until then nothing is sent: an answer never
// silently comes from another model.
#pragma once

#include "chat/chatmessage.h"

#include <QString>

class EngineController;

namespace modeltie {

enum class State {
    Same,  // the conversation's model is open (or loading), or it is new or not tied yet
    Other, // its model is on this computer, and another one (or none) is open
    Gone,  // its model is no longer there (deleted, or a remote engine removed)
};

State of(const Conversation &conversation, const EngineController &engine);
// Why sending waits, with what to do ("" when the state is Same).
QString sendBlocked(const Conversation &conversation, const EngineController &engine);

} // namespace modeltie
