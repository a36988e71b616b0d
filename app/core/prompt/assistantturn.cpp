#include "prompt/assistantturn.h"

#include <algorithm>
#include <memory>
#include <vector>

DialogueTurn assistantTurn(const waste::Model &model, std::span<const int32_t> prompt, const waste::GenResult &result,
                           const waste::GenParams &params, bool openedThinking)
{
    const std::unique_ptr<waste::ReplyParser> parser = model.replyParser(prompt);
    std::vector<int32_t> read; // the answer's tokens up to its stop token
    for (const int32_t t : result.tokens) {
        if (t == model.info().eosId
            || std::find(params.stopTokens.begin(), params.stopTokens.end(), t) != params.stopTokens.end())
            break;
        parser->feed(t);
        read.push_back(t);
    }
    parser->finish();
    DialogueTurn turn;
    turn.role = QStringLiteral("assistant");
    // The raw answer with its markup, from its tokens (the generated text leaves specials out
    // unless asked), so the history renders back to the tokens the model wrote.
    turn.text = params.keepSpecialText ? QString::fromStdString(result.text)
                                       : QString::fromStdString(model.detokenize(read));
    turn.reasoning = QString::fromStdString(parser->reply().reasoning);
    turn.content = QString::fromStdString(parser->reply().content);
    turn.openedThinking = openedThinking;
    return turn;
}
