// The texts of a model's special tokens ("[BOS]", "<|im_assistant|>", "<|media_end|>"…),
// and text with them taken out. Only for what a person reads: stored and returned replies
// keep every special, since clients and the chat send them back and the next prompt must
// match the tokens the model read (prefix reuse).
#pragma once

#include <QString>
#include <QStringList>

// From the container's specials.json (every container has one); empty when it has none or
// is not a local container (a remote engine).
QStringList containerSpecialTexts(const QString &containerPath);

// `text` without any of `specials` (longest first, so one special inside another goes whole).
QString withoutSpecials(const QString &text, const QStringList &specials);
