// A conversation as the prompt renderer reads it: the GUI chat, `waste run` and `waste chat`
// all describe what was said this way and leave the format to renderDialogue().
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

struct DialogueTurn {
    QString role;           // "user" or "assistant"
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
};

struct Dialogue {
    QString systemPrompt;   // empty: none
    QList<DialogueTurn> turns;
    bool thinking = false;  // the answer starts in the thinking channel (K3 models)
};

// Round trip for keeping a dialogue with a saved state (`waste chat` /save and /load).
QJsonObject dialogueToJson(const Dialogue &dialogue);
Dialogue dialogueFromJson(const QJsonObject &json);
