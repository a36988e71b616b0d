// A conversation as the prompt renderer reads it: the GUI chat, `waste run` and `waste chat`
// all describe what was said this way and leave the format to renderDialogue().
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

struct DialogueTurn {
    QString role;           // "user", "assistant" or "tool"
    // user: what they wrote. assistant: the reply exactly as the model wrote it (thinking and
    // channel markers included), so the rendered history repeats the engine state byte for byte
    // (ChatML and plain transcripts write it back as it came).
    QString text;
    // assistant: the same reply as the model's reply parser read it (waste::Model::replyParser),
    // exactly as released: K3 writes past answers back from these channels.
    QString reasoning;
    QString content;
    QStringList imagePaths; // user: images, placed before the words
    bool openedThinking = false; // assistant: its prompt opened the thinking channel (K3)
    // assistant: the tool calls it made, OpenAI-shaped ({id, type, function: {name, arguments}}).
    QJsonArray toolCalls;
    // tool: the call this turn answers (its text is the result).
    QString toolCallId;
    QString toolName;
};

struct Dialogue {
    QString systemPrompt;   // empty: none
    QList<DialogueTurn> turns;
    bool thinking = false;  // the answer starts in the thinking channel (K3 models)
    QJsonArray tools;       // functions offered to the model (an OpenAI "tools" array); empty: none
    // A forced call ("required" or a function's name), for a remote engine's server; a local
    // engine forces it by constrained decoding (GenerationRequest::makeConstraint). Empty: free.
    QString toolChoice;
};

// Round trip for keeping a dialogue with a saved state (`waste chat` /save and /load).
QJsonObject dialogueToJson(const Dialogue &dialogue);
Dialogue dialogueFromJson(const QJsonObject &json);
