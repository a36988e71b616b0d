// The shared conversation renderer (app/core/prompt) and the PromptFeeder on real containers:
// each format (raw, ChatML, K3) is deterministic and prefix-stable, user text never becomes
// markup, images become media blocks in order; a second turn keeps the engine state and feeds
// only the new part, and the logits are then bit for bit those of feeding the same tokens in
// one go; a saved state restores on a fresh session; images in the kept part are not encoded
// again. Replies are split by the model's own reply parser: K3 channels, <think> blocks.
#include "prompt/assistantturn.h"
#include "prompt/dialoguerenderer.h"
#include "prompt/mediablock.h"
#include "engine/promptfeeder.h"
#include "engine/statehistory.h"

#include <waste/prefix.hpp>
#include <waste/waste.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

namespace {

const QString kR3 = QStringLiteral(WASTE_FIXTURES_DIR "/reference-container/r3.waste");
const QString kK3 = QStringLiteral(WASTE_FIXTURES_DIR "/k3-container/k3s1.waste");
const QString kVision = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/v1.waste");
const QString kImageA = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_a.png");
const QString kImageB = QStringLiteral(WASTE_FIXTURES_DIR "/vision-container/img_b.jpg");

DialogueTurn turn(const QString &role, const QString &text, const QStringList &images = {}, bool opened = false)
{
    DialogueTurn t;
    t.role = role;
    t.text = text;
    t.imagePaths = images;
    t.openedThinking = opened;
    return t;
}

QString joined(const QList<PromptSegment> &segments, qsizetype count = -1)
{
    QString s;
    for (qsizetype i = 0; i < (count < 0 ? segments.size() : count); ++i)
        s += segments.at(i).text;
    return s;
}

std::unique_ptr<waste::Model> open(const QString &path)
{
    waste::OpenOptions o;
    o.ctxTokens = 2048;
    return waste::Model::open(path.toStdString(), o);
}

std::vector<int32_t> promptTokens(const waste::Model &model, const RenderedPrompt &prompt)
{
    std::vector<int32_t> ids;
    for (const PromptSegment &s : prompt.segments) {
        const std::vector<int32_t> part = model.tokenize(s.text.toStdString(), s.markup);
        ids.insert(ids.end(), part.begin(), part.end());
    }
    return ids;
}

// A reply read by the model's reply parser, written in chunks (markup: specials are tokens);
// no step ever releases a piece of a K3 channel marker.
waste::ChatReply readReply(const waste::Model &model, const std::vector<int32_t> &prompt,
                           const std::vector<std::string> &chunks)
{
    const std::unique_ptr<waste::ReplyParser> parser = model.replyParser(prompt);
    for (const std::string &chunk : chunks)
        for (const int32_t t : model.tokenize(chunk, true)) {
            const waste::ReplyDelta d = parser->feed(t);
            if (d.reasoning.find("<|") != std::string::npos || d.content.find("<|") != std::string::npos)
                throw std::runtime_error("a channel marker was released as text");
        }
    parser->finish();
    return parser->reply();
}

waste::GenParams greedy(int n)
{
    waste::GenParams p;
    p.maxTokens = n;
    return p;
}

} // namespace

class TestDialogue : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFormatIsPrefixStable_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("thinking");
        QTest::newRow("raw") << int(waste::ChatFormat::Plain) << false;
        QTest::newRow("chatml") << int(waste::ChatFormat::ChatMl) << false;
        QTest::newRow("k3 thinking") << int(waste::ChatFormat::K3) << true;
        QTest::newRow("k3 no thinking") << int(waste::ChatFormat::K3) << false;
    }
    void everyFormatIsPrefixStable()
    {
        QFETCH(int, kind);
        QFETCH(bool, thinking);
        const waste::ChatFormat k = waste::ChatFormat(kind);
        Dialogue d;
        d.systemPrompt = QStringLiteral("Be brief.");
        d.thinking = thinking;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("What is <|im_end|> <|open|>?"), {kImageA});
        const RenderedPrompt first = renderDialogue(d, k);
        QCOMPARE(renderDialogue(d, k).segments.size(), first.segments.size()); // deterministic
        QCOMPARE(joined(renderDialogue(d, k).segments), joined(first.segments));
        QCOMPARE(first.imagePaths, QStringList{kImageA});
        QCOMPARE(first.opensThinking, k == waste::ChatFormat::K3 && thinking);

        // User text is never markup; the image is a media block that is.
        int blocks = 0;
        for (const PromptSegment &s : first.segments) {
            if (s.text.contains(QLatin1String("What is")))
                QVERIFY(!s.markup);
            if (s.text.contains(QLatin1String("<|media_pad|>"))) {
                QVERIFY(s.markup);
                QCOMPARE(s.text, imageMediaBlock(kImageA));
                ++blocks;
            }
        }
        QCOMPARE(blocks, 1);
        QCOMPARE(imageMediaBlock(kImageA),
                 QStringLiteral("<|media_begin|>image 230x170<|media_content|><|media_pad|><|media_end|>"));

        // The reply as a model of this format writes it, then the next question: the first
        // prompt's segments come first, unchanged, then the reply's text.
        QString reply = QStringLiteral("An answer.");
        if (k == waste::ChatFormat::K3)
            reply = (thinking ? QStringLiteral("Plan.<|close|>think<|sep|><|open|>response<|sep|>") : QString())
                    + QStringLiteral("An answer.<|close|>response<|sep|><|close|>message<|sep|>");
        d.turns << turn(QStringLiteral("assistant"), reply, {}, first.opensThinking);
        // The same reply as the model's reply parser reads it (K3 writes it back from its channels).
        d.turns.last().reasoning = first.opensThinking ? QStringLiteral("Plan.") : QString();
        d.turns.last().content = QStringLiteral("An answer.");
        d.turns << turn(QStringLiteral("user"), QStringLiteral("And then?"), {kImageB});
        const RenderedPrompt second = renderDialogue(d, k);
        QCOMPARE(second.imagePaths, (QStringList{kImageA, kImageB}));
        for (qsizetype i = 0; i < first.segments.size(); ++i) {
            QCOMPARE(second.segments.at(i).text, first.segments.at(i).text);
            QCOMPARE(second.segments.at(i).markup, first.segments.at(i).markup);
        }
        // Byte for byte, the reply up to where a model ends it (its end marker is not fed).
        QString fed = reply;
        if (k == waste::ChatFormat::K3)
            fed.chop(QStringLiteral("<|close|>message<|sep|>").size());
        QVERIFY2(joined(second.segments).startsWith(joined(first.segments) + fed), qPrintable(joined(second.segments)));
    }

    void repliesAreSplitByTheModelsParser()
    {
        // The one reply parser of the chat page, `waste chat` and the API server: K3's
        // channels come from its special tokens, so no marker ever shows, not even in part.
        auto k3 = open(kK3);
        QCOMPARE(k3->info().chatFormat, waste::ChatFormat::K3); // decided by the engine at open
        Dialogue d;
        d.thinking = true;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Hi"));
        const std::vector<int32_t> thinkingPrompt = promptTokens(*k3, renderDialogue(d, waste::ChatFormat::K3));
        d.thinking = false;
        const std::vector<int32_t> answerPrompt = promptTokens(*k3, renderDialogue(d, waste::ChatFormat::K3));

        waste::ChatReply r = readReply(*k3, thinkingPrompt,
                                       {"Plan.<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|>"});
        QCOMPARE(r.reasoning, std::string("Plan."));
        QCOMPARE(r.content, std::string("Hi."));
        QCOMPARE(readReply(*k3, thinkingPrompt, {"Still thinking"}).reasoning, std::string("Still thinking"));
        QCOMPARE(readReply(*k3, answerPrompt, {"Hi.<|close|>response<|sep|>"}).content, std::string("Hi."));
        // The template opened the thinking channel, the model closes it, across chunks.
        r = readReply(*k3, thinkingPrompt, {"Plan.<|close|>think", "<|sep|>Answer."});
        QCOMPARE(r.reasoning, std::string("Plan."));
        QCOMPARE(r.content, std::string("Answer."));

        // Other models: a leading <think>...</think> is thinking, its tags cut across tokens.
        auto r3 = open(kR3);
        QCOMPARE(r3->info().chatFormat, waste::ChatFormat::Plain); // kimi-linear, no chat template
        const std::vector<int32_t> plainPrompt = r3->tokenize("user: Hi\n\nassistant: ");
        r = readReply(*r3, plainPrompt, {"<th", "ink>The user", " wants X.</thi", "nk>\n\nHere", " is X."});
        QCOMPARE(r.reasoning, std::string("The user wants X."));
        QCOMPARE(r.content, std::string("Here is X."));
        r = readReply(*r3, plainPrompt, {"Hello <think> is literal here"});
        QVERIFY(r.reasoning.empty());
        QCOMPARE(r.content, std::string("Hello <think> is literal here"));
    }

    void unreadableImagesAreRefusedInWords()
    {
        QTemporaryDir dir;
        const QString fake = dir.filePath(QStringLiteral("notes.png"));
        QFile f(fake);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not pixels\n");
        f.close();
        Dialogue d;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("look"), {fake});
        try {
            renderDialogue(d, waste::ChatFormat::ChatMl);
            QFAIL("a text file was rendered as an image");
        } catch (const std::runtime_error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("notes.png")), e.what());
        }
    }

    void historyMatchesGeneratedTextNotIds()
    {
        // "ab" sampled as two ids, rendered back as one: the same text, so the prefix holds.
        const StateHistory::TokenBytes bytes{[](int32_t t) -> std::string {
                                                 switch (t) {
                                                 case 1: return "a";
                                                 case 2: return "b";
                                                 case 3: return "ab";
                                                 default: return "<" + std::to_string(t) + ">";
                                                 }
                                             },
                                             [](int32_t t) { return t == 5; }};
        StateHistory h;
        const std::vector<int32_t> prompt{7, 8};
        h.appendPrompt(prompt);
        const std::vector<int32_t> sampled{1, 2};
        h.appendGenerated(sampled, "ab");
        QCOMPARE(h.matchPrefix(std::vector<int32_t>{7, 8, 3, 9}, bytes), qsizetype(3));
        QCOMPARE(h.matchPrefix(std::vector<int32_t>{7, 8, 1, 2, 9}, bytes), qsizetype(4));
        QCOMPARE(h.matchPrefix(std::vector<int32_t>{7, 9, 3, 9}, bytes), qsizetype(-1)); // prompt differs
        QCOMPARE(h.matchPrefix(std::vector<int32_t>{7, 8, 1, 9}, bytes), qsizetype(-1)); // reply differs
        QCOMPARE(h.matchPrefix(std::vector<int32_t>{7, 8}, bytes), qsizetype(-1));       // shorter
        const std::optional<StateHistory> back = StateHistory::fromJson(h.toJson());
        QVERIFY(back);
        QCOMPARE(back->matchPrefix(std::vector<int32_t>{7, 8, 3, 9}, bytes), qsizetype(3));
        QCOMPARE(back->tokenCount(), qsizetype(4));

        // A special among the generated tokens (5, "<5>"): the reply comes back with it, as a
        // special or spelled out as text, or without it (a client's content), and matches
        // each way; with other text in its place it does not.
        StateHistory s;
        s.appendPrompt(prompt);
        const std::vector<int32_t> withSpecial{1, 5, 2};
        s.appendGenerated(withSpecial, "a<5>b", "ab");
        QCOMPARE(s.matchPrefix(std::vector<int32_t>{7, 8, 1, 5, 2, 9}, bytes), qsizetype(5)); // as written
        QCOMPARE(s.matchPrefix(std::vector<int32_t>{7, 8, 3, 9}, bytes), qsizetype(3));       // without it
        QCOMPARE(s.matchPrefix(std::vector<int32_t>{7, 8, 1, 6, 2, 9}, bytes), qsizetype(-1)); // another token there
        const std::optional<StateHistory> sBack = StateHistory::fromJson(s.toJson());
        QVERIFY(sBack);
        QCOMPARE(sBack->matchPrefix(std::vector<int32_t>{7, 8, 3, 9}, bytes), qsizetype(3));
    }

    void secondTurnFeedsOnlyTheNewPart_data()
    {
        QTest::addColumn<QString>("container");
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("thinking");
        QTest::newRow("r3 chatml") << kR3 << int(waste::ChatFormat::ChatMl) << false;
        QTest::newRow("r3 raw") << kR3 << int(waste::ChatFormat::Plain) << false;
        QTest::newRow("k3s1 k3 thinking") << kK3 << int(waste::ChatFormat::K3) << true;
    }
    void secondTurnFeedsOnlyTheNewPart()
    {
        QFETCH(QString, container);
        QFETCH(int, kind);
        QFETCH(bool, thinking);
        const waste::ChatFormat k = waste::ChatFormat(kind);
        auto model = open(container);
        PromptFeeder feeder;
        feeder.setModel(model.get(), QStringLiteral("test"));

        Dialogue d;
        d.systemPrompt = QStringLiteral("You are terse.");
        d.thinking = thinking;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Hello there"));
        RenderedPrompt prompt = renderDialogue(d, k);
        PromptFeeder::Prepared p = feeder.prepare(prompt.segments, prompt.imagePaths, true, {});
        QCOMPARE(p.reused, qsizetype(0));
        waste::GenResult r = model->generate(p.rest(), greedy(12));
        feeder.record(p, r);
        const qsizetype firstPrompt = qsizetype(p.prompt.size());

        d.turns << assistantTurn(*model, p.prompt, r, greedy(12), prompt.opensThinking);
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Tell me more."));
        prompt = renderDialogue(d, k);
        const waste::Stats before = model->stats();
        p = feeder.prepare(prompt.segments, prompt.imagePaths, true, {});
        QVERIFY2(p.reused > firstPrompt, qPrintable(QStringLiteral("kept %1 of %2").arg(p.reused).arg(p.prompt.size())));
        const std::vector<float> kept = model->eval(p.rest());
        QCOMPARE(model->stats().tokensPrefilled - before.tokensPrefilled, int64_t(p.rest().size()));

        // The same tokens in one go on a fresh session: the same logits within rounding (there
        // the answer's tokens are read as a prompt, here they were generated: decode kernels).
        std::vector<int32_t> all;
        for (const QJsonValue &c : feeder.history().toJson())
            for (const QJsonValue &t : c.toObject().value(QStringLiteral("tokens")).toArray())
                all.push_back(int32_t(t.toInt()));
        all.insert(all.end(), p.rest().begin(), p.rest().end());
        auto fresh = open(container);
        const std::vector<float> again = fresh->eval(all);
        QCOMPARE(again.size(), kept.size());
        float gap = 0, largest = 0;
        for (size_t i = 0; i < kept.size(); ++i) {
            gap = std::max(gap, std::fabs(again[i] - kept[i]));
            largest = std::max(largest, std::fabs(kept[i]));
        }
        QVERIFY2(gap <= 1e-4f * largest, qPrintable(QStringLiteral("%1 of %2").arg(gap).arg(largest)));
    }

    void savedStateRestoresOnAFreshSession()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("c1.state"));
        auto model = open(kR3);
        PromptFeeder feeder;
        feeder.setModel(model.get(), QStringLiteral("r3"));
        Dialogue d;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Hello there"));
        RenderedPrompt prompt = renderDialogue(d, waste::ChatFormat::ChatMl);
        PromptFeeder::Prepared p = feeder.prepare(prompt.segments, {}, true, file);
        const waste::GenResult r = model->generate(p.rest(), greedy(8));
        feeder.record(p, r);
        feeder.save(file);
        d.turns << turn(QStringLiteral("assistant"), QString::fromStdString(r.text));
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Go on."));
        prompt = renderDialogue(d, waste::ChatFormat::ChatMl);
        p = feeder.prepare(prompt.segments, {}, true, file);
        QVERIFY(!p.restored);
        const std::vector<float> inMemory = model->eval(p.rest());

        auto again = open(kR3);
        PromptFeeder other;
        other.setModel(again.get(), QStringLiteral("r3"));
        const PromptFeeder::Prepared q = other.prepare(prompt.segments, {}, true, file);
        QVERIFY(q.restored);
        QCOMPARE(q.reused, p.reused);
        QVERIFY(again->eval(q.rest()) == inMemory);

        // Another model's record is ignored, and a prompt the state is not a prefix of resets.
        // (On a session of its own: the engine itself would keep what `again` read.)
        auto third = open(kR3);
        PromptFeeder stranger;
        stranger.setModel(third.get(), QStringLiteral("another model"));
        QCOMPARE(stranger.prepare(prompt.segments, {}, true, file).reused, qsizetype(0));
        PromptFeeder edited;
        edited.setModel(again.get(), QStringLiteral("r3"));
        d.turns.first().text = QStringLiteral("Hello here");
        QCOMPARE(edited.prepare(renderDialogue(d, waste::ChatFormat::ChatMl).segments, {}, true, file).reused, qsizetype(0));
    }

    void aRewrittenAnswerGoesBackToItsStartAlsoAfterReopening()
    {
        // K3 with thinking on and a client that sends back only the answer's content: the past
        // answer's think element is then empty, so the next prompt leaves what the engine read
        // where the reasoning began, the checkpoint generate() kept at the answer's start. Only
        // the rest is read, in memory and on a fresh session that loads the saved state.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("k3.state"));
        auto model = open(kK3);
        PromptFeeder feeder;
        feeder.setModel(model.get(), QStringLiteral("k3s1"));
        Dialogue d;
        d.thinking = true;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Hello there"));
        RenderedPrompt prompt = renderDialogue(d, waste::ChatFormat::K3);
        PromptFeeder::Prepared p = feeder.prepare(prompt.segments, {}, true, file);
        const waste::GenResult r = model->generate(p.rest(), greedy(8));
        feeder.record(p, r);
        feeder.save(file);
        const qsizetype first = qsizetype(p.prompt.size());
        DialogueTurn answer = assistantTurn(*model, p.prompt, r, greedy(8), prompt.opensThinking);
        QVERIFY(!answer.reasoning.isEmpty()); // the random model's words are all in the think channel
        answer.reasoning.clear();
        d.turns << answer << turn(QStringLiteral("user"), QStringLiteral("Go on."));
        prompt = renderDialogue(d, waste::ChatFormat::K3);

        p = feeder.prepare(prompt.segments, {}, true, file);
        QVERIFY(!p.restored);
        QCOMPARE(p.reused, first);
        const std::vector<float> inMemory = model->eval(p.rest());
        QVERIFY(open(kK3)->eval(p.prompt) == inMemory); // a fresh read of the whole prompt

        auto reopened = open(kK3);
        PromptFeeder other;
        other.setModel(reopened.get(), QStringLiteral("k3s1"));
        const PromptFeeder::Prepared q = other.prepare(prompt.segments, {}, true, file);
        QVERIFY(q.restored);
        QCOMPARE(q.reused, first);
        QVERIFY(reopened->eval(q.rest()) == inMemory);

        // This turn went back to a checkpoint, so its save writes only the state at this
        // answer's start (the live state would not be used): a third turn that rewrites the
        // second answer continues from the file.
        const waste::GenResult r2 = model->generate({}, greedy(8));
        feeder.record(p, r2);
        feeder.save(file);
        QCOMPARE(feeder.lastKept(), PromptFeeder::Kept::Checkpoint);
        const qsizetype second = qsizetype(p.prompt.size());
        DialogueTurn answer2 = assistantTurn(*model, p.prompt, r2, greedy(8), prompt.opensThinking);
        answer2.reasoning.clear();
        d.turns << answer2 << turn(QStringLiteral("user"), QStringLiteral("And then?"));
        prompt = renderDialogue(d, waste::ChatFormat::K3);
        auto third = open(kK3);
        PromptFeeder thirdFeeder;
        thirdFeeder.setModel(third.get(), QStringLiteral("k3s1"));
        const PromptFeeder::Prepared t = thirdFeeder.prepare(prompt.segments, {}, true, file);
        QVERIFY(t.restored);
        QCOMPARE(t.reused, second);
        QCOMPARE(waste::checkpointPosition(*third), 0); // the file held the state there, no checkpoint
        QVERIFY(third->eval(t.rest()) == open(kK3)->eval(t.prompt));
    }

    void keptImagesAreNotEncodedAgain()
    {
        auto model = open(kVision);
        PromptFeeder feeder;
        feeder.setModel(model.get(), QStringLiteral("v1"));
        Dialogue d;
        d.turns << turn(QStringLiteral("user"), QStringLiteral("Describe the picture."), {kImageA});
        RenderedPrompt prompt = renderDialogue(d, waste::ChatFormat::Plain);
        PromptFeeder::Prepared p = feeder.prepare(prompt.segments, prompt.imagePaths, true, {});
        QVERIFY(!model->pendingImageMarkup().empty()); // encoded for this turn
        waste::GenResult r = model->generate(p.rest(), greedy(6));
        QVERIFY(r.promptTokens > int(p.prompt.size())); // the image took positions
        feeder.record(p, r);

        d.turns << turn(QStringLiteral("assistant"), QString::fromStdString(r.text));
        d.turns << turn(QStringLiteral("user"), QStringLiteral("And this one?"), {kImageB});
        prompt = renderDialogue(d, waste::ChatFormat::Plain);
        p = feeder.prepare(prompt.segments, prompt.imagePaths, true, {});
        QVERIFY(p.reused > 0);
        // Only the new image waits to be placed.
        QCOMPARE(QString::fromStdString(model->pendingImageMarkup()), imageMediaBlock(kImageB));
        r = model->generate(p.rest(), greedy(4));
        QVERIFY(!r.tokens.empty());
    }
};

QTEST_GUILESS_MAIN(TestDialogue)
#include "tst_dialogue.moc"
