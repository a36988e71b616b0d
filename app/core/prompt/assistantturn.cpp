#include "prompt/assistantturn.h"

#include <algorithm>
#include <memory>

DialogueTurn assistantTurn(const waste::Model &model, std::span<const int32_t> prompt, const waste::GenResult &result,
                           const waste::GenParams &params, bool openedThinking)
{
    const std::unique_ptr<waste::ReplyParser> parser = model.replyParser(prompt);
    for (const int32_t t : result.tokens) {
        if (t == model.info().eosId
            || std::find(params.stopTokens.begin(), params.stopTokens.end(), t) != params.stopTokens.end())
            break;
        parser->feed(t);
    }
    parser->finish();
    DialogueTurn turn;
    turn.role = QStringLiteral("assistant");
    turn.text = QString::fromStdString(result.text);
    turn.reasoning = QString::fromStdString(parser->reply().reasoning);
    turn.content = QString::fromStdString(parser->reply().content);
    turn.openedThinking = openedThinking;
    return turn;
}
