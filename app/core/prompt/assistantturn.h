// A finished answer as the next prompt needs it: the reply exactly as the model wrote it, and
// the same reply read by the model's reply parser (waste::Model::replyParser), which is how K3
// writes past answers back. For front ends that generate on the model directly (`waste chat`);
// the chat page reads its replies through the EngineController (GenerationRequest::parseReply).
#pragma once

#include "prompt/dialogue.h"

#include <waste/waste.hpp>

#include <span>

// prompt: the whole prompt the reply continues; params: the generation's (its stop tokens end
// the reply like EOS). openedThinking: the prompt opened the thinking channel.
DialogueTurn assistantTurn(const waste::Model &model, std::span<const int32_t> prompt, const waste::GenResult &result,
                           const waste::GenParams &params, bool openedThinking);
