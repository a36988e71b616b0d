#include "text/argument_list_constraint.hpp"

#include "text/token_budget.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace waste::text {

namespace {

[[noreturn]] void badList(const std::string &what)
{
    throw Error(ErrorCode::Argument, "constrained decoding: " + what);
}

} // namespace

// The list as instructions. Jumps only go forward, so the shortest way to finish from each
// instruction is one pass from the end.
struct ArgumentListConstraint::Program {
    enum class Op { Tokens, Value, Split, Jump, End };
    struct Instr {
        Op op = Op::End;
        std::vector<int32_t> tokens; // Tokens (not empty)
        size_t element = 0;          // Value
        size_t a = 0, b = 0;         // Split: both; Jump: a
    };
    std::vector<Instr> code;
    std::vector<JsonRecognizer> recognizers; // one per element
    std::vector<int64_t> rest;               // shortest finish from each instruction
    std::vector<uint32_t> fail;              // the stop text's KMP failure function

    size_t emit(Instr i)
    {
        code.push_back(std::move(i));
        return code.size() - 1;
    }
    void tokens(const std::vector<int32_t> &ids)
    {
        if (!ids.empty())
            emit({Op::Tokens, ids, 0, 0, 0});
    }
    void element(const ArgumentList &list, size_t e)
    {
        tokens(list.elements[e].head);
        emit({Op::Value, {}, e, 0, 0});
        tokens(list.elements[e].tail);
    }
    // The shortest value of an element, in bytes written (a raw string's closing quote is not).
    int64_t shortestValue(size_t e, bool raw) const
    {
        const JsonRecognizer &rec = recognizers[e];
        JsonRecognizer::State s = rec.initial();
        if (!raw)
            return rec.minRemaining(s);
        if (!rec.feed(s, '"'))
            return kInfiniteLen;
        return std::max<int64_t>(0, rec.minRemaining(s) - 1);
    }

    explicit Program(const ArgumentList &list)
    {
        for (const ArgumentList::Element &e : list.elements) {
            if (!e.schema || e.tail.empty())
                badList("an argument needs a schema and a tail");
            recognizers.emplace_back(e.schema);
        }
        if (list.close.empty())
            badList("an argument list needs tokens that close it");
        std::vector<size_t> required, optional;
        for (size_t e = 0; e < list.elements.size(); ++e)
            (list.elements[e].required ? required : optional).push_back(e);
        if (!std::is_sorted(list.elements.begin(), list.elements.end(),
                            [](const auto &x, const auto &y) { return x.required && !y.required; }))
            badList("required arguments come first");

        // Optional arguments after at least one written: each either written (after the
        // separator) or passed, in order. Returns the jumps to patch to the close.
        std::vector<size_t> toClose;
        const auto optionalChain = [&](size_t from) {
            for (size_t i = from; i < optional.size(); ++i) {
                const size_t split = emit({Op::Split, {}, 0, 0, 0});
                code[split].a = code.size();
                tokens(list.separator);
                element(list, optional[i]);
                code[split].b = code.size();
            }
            toClose.push_back(emit({Op::Jump, {}, 0, 0, 0}));
        };
        if (!required.empty()) {
            for (size_t i = 0; i < required.size(); ++i) {
                if (i > 0)
                    tokens(list.separator);
                element(list, required[i]);
            }
            optionalChain(0);
        } else {
            // No argument yet: the first one written has no separator before it.
            std::vector<size_t> starts;
            for (size_t i = 0; i < optional.size(); ++i)
                starts.push_back(emit({Op::Split, {}, 0, 0, 0}));
            const size_t none = emit({Op::Jump, {}, 0, 0, 0}); // no argument at all
            toClose.push_back(none);
            for (size_t i = 0; i < optional.size(); ++i) {
                code[starts[i]].a = code.size();
                code[starts[i]].b = i + 1 < optional.size() ? starts[i + 1] : none;
                element(list, optional[i]);
                optionalChain(i + 1);
            }
        }
        const size_t close = code.size();
        tokens(list.close);
        emit({Op::End, {}, 0, 0, 0});
        for (size_t j : toClose)
            code[j].a = close;

        rest.assign(code.size(), 0);
        for (size_t pc = code.size(); pc-- > 0;) {
            const Instr &in = code[pc];
            switch (in.op) {
            case Op::Tokens:
                rest[pc] = int64_t(in.tokens.size()) + rest[pc + 1];
                break;
            case Op::Value:
                rest[pc] = std::min(kInfiniteLen, shortestValue(in.element, list.elements[in.element].raw) + rest[pc + 1]);
                break;
            case Op::Split:
                rest[pc] = std::min(rest[in.a], rest[in.b]);
                break;
            case Op::Jump:
                rest[pc] = rest[in.a];
                break;
            case Op::End:
                rest[pc] = 0;
                break;
            }
        }
        if (rest[0] >= kInfiniteLen)
            badList("a required argument's schema allows no value");

        const std::string &s = list.stop;
        fail.assign(s.size(), 0);
        for (size_t i = 1, k = 0; i < s.size(); ++i) {
            while (k > 0 && s[i] != s[k])
                k = fail[k - 1];
            if (s[i] == s[k])
                ++k;
            fail[i] = uint32_t(k);
        }
    }
};

struct ArgumentListConstraint::Thread {
    size_t pc = 0;
    uint32_t pos = 0;        // Tokens: the next token's index; Value: the stop text matched so far
    bool fresh = true;       // Value: not started (its state is set as it is entered)
    JsonRecognizer::State json;
};

ArgumentListConstraint::ArgumentListConstraint(std::shared_ptr<const TokenTrie> trie,
                                               std::shared_ptr<const ArgumentList> list, int maxTokens)
    : m_trie(std::move(trie)), m_list(std::move(list)), m_program(std::make_unique<Program>(*m_list)),
      m_maxTokens(maxTokens)
{
    m_threads.push_back({});
    settle(m_threads);
}

ArgumentListConstraint::~ArgumentListConstraint() = default;

int64_t ArgumentListConstraint::minimumTokens(const ArgumentList &list) { return Program(list).rest[0]; }

namespace {

// Feeds one byte of a value: a raw string's byte as the JSON string character it stands for.
bool feedValue(const JsonRecognizer &rec, JsonRecognizer::State &s, bool raw, uint8_t b)
{
    if (!raw)
        return rec.feed(s, b);
    if (b == '"' || b == '\\')
        return rec.feed(s, '\\') && rec.feed(s, b);
    if (b < 0x20) {
        static const char hex[] = "0123456789abcdef";
        for (const uint8_t c : {uint8_t('\\'), uint8_t('u'), uint8_t('0'), uint8_t('0'), uint8_t(hex[b >> 4]),
                                uint8_t(hex[b & 15])})
            if (!rec.feed(s, c))
                return false;
        return true;
    }
    return rec.feed(s, b);
}

bool valueCanEnd(const JsonRecognizer &rec, const JsonRecognizer::State &s, bool raw)
{
    if (!raw)
        return rec.canEnd(s);
    JsonRecognizer::State closed = s;
    return rec.feed(closed, '"') && rec.canEnd(closed);
}

// Bytes still to write for a value (a raw string's closing quote is not written).
int64_t valueRemaining(const JsonRecognizer &rec, const JsonRecognizer::State &s, bool raw)
{
    const int64_t r = rec.minRemaining(s);
    return raw ? std::max<int64_t>(0, r - 1) : r;
}

// Advances the stop text's match by one byte; false when the value would contain it.
bool feedStop(const std::string &stop, const std::vector<uint32_t> &fail, uint32_t &k, uint8_t b)
{
    if (stop.empty())
        return true;
    while (k > 0 && uint8_t(stop[k]) != b)
        k = fail[k - 1];
    if (uint8_t(stop[k]) == b)
        ++k;
    return k < stop.size();
}

} // namespace

// Follows every instruction that reads nothing (the end of a Tokens run, splits, jumps, a
// value that may end here) until each thread waits for a token.
void ArgumentListConstraint::settle(std::vector<Thread> &threads) const
{
    const Program &p = *m_program;
    std::vector<Thread> out, work = std::move(threads);
    std::set<std::pair<size_t, uint32_t>> seen; // (pc, pos) of threads that hold no value state
    while (!work.empty()) {
        Thread t = std::move(work.back());
        work.pop_back();
        const Program::Instr &in = p.code[t.pc];
        switch (in.op) {
        case Program::Op::Tokens:
            if (t.pos == in.tokens.size()) {
                work.push_back({t.pc + 1, 0, true, {}});
                break;
            }
            if (seen.insert({t.pc, t.pos}).second)
                out.push_back(std::move(t));
            break;
        case Program::Op::Value: {
            const JsonRecognizer &rec = p.recognizers[in.element];
            const bool raw = m_list->elements[in.element].raw;
            if (t.fresh) {
                if (!seen.insert({t.pc, UINT32_MAX}).second)
                    break; // entered twice at once: the same thread
                t.fresh = false;
                t.pos = 0;
                t.json = rec.initial();
                if (raw && !rec.feed(t.json, '"'))
                    break; // the schema allows no string
            }
            if (valueCanEnd(rec, t.json, raw))
                work.push_back({t.pc + 1, 0, true, {}});
            out.push_back(std::move(t));
            break;
        }
        case Program::Op::Split:
            work.push_back({in.a, 0, true, {}});
            work.push_back({in.b, 0, true, {}});
            break;
        case Program::Op::Jump:
            work.push_back({in.a, 0, true, {}});
            break;
        case Program::Op::End:
            if (seen.insert({t.pc, 0}).second)
                out.push_back(std::move(t));
            break;
        }
    }
    threads = std::move(out);
}

void ArgumentListConstraint::allowed(std::vector<bool> &mask)
{
    std::fill(mask.begin(), mask.end(), false);
    if (mask.size() < m_trie->vocabSize())
        mask.resize(m_trie->vocabSize(), false);
    const Program &p = *m_program;
    const int64_t limit0 = m_maxTokens > 0 ? int64_t(m_maxTokens) - m_used - 1 : kInfiniteLen;

    // Tokens each thread may take next, with the shortest finish after them.
    struct Option {
        int32_t token;  // a fixed token, or -1: trie node `node`'s tokens
        uint32_t node;
        int64_t cost;
    };
    std::vector<Option> options;
    std::vector<size_t> values; // threads inside a value
    for (size_t i = 0; i < m_threads.size(); ++i) {
        const Thread &t = m_threads[i];
        const Program::Instr &in = p.code[t.pc];
        if (in.op == Program::Op::Tokens)
            options.push_back({in.tokens[t.pos], 0, int64_t(in.tokens.size() - t.pos - 1) + p.rest[t.pc + 1]});
        else if (in.op == Program::Op::Value)
            values.push_back(i);
    }
    if (!values.empty()) {
        // Depth-first over the trie, each level holding every value thread still alive.
        struct Live {
            size_t thread;
            uint32_t stop;
            JsonRecognizer::State json;
        };
        // Level d holds count[d] live entries (kept, not shrunk, so their states keep their memory).
        std::vector<std::vector<Live>> levels(1);
        std::vector<size_t> count(1, 0);
        for (size_t i : values)
            levels[0].push_back({i, m_threads[i].pos, m_threads[i].json});
        count[0] = levels[0].size();
        m_trie->walk([&](size_t depth, uint8_t byte, uint32_t child) {
            if (levels.size() <= depth) {
                levels.resize(depth + 1);
                count.resize(depth + 1, 0);
            }
            std::vector<Live> &next = levels[depth];
            const std::vector<Live> &prev = levels[depth - 1];
            if (next.size() < count[depth - 1])
                next.resize(count[depth - 1]);
            size_t alive = 0;
            for (size_t k = 0; k < count[depth - 1]; ++k) {
                const Live &l = prev[k];
                const size_t el = p.code[m_threads[l.thread].pc].element;
                Live &n = next[alive];
                n.thread = l.thread;
                n.stop = l.stop;
                n.json = l.json;
                if (feedStop(m_list->stop, p.fail, n.stop, byte) &&
                    feedValue(p.recognizers[el], n.json, m_list->elements[el].raw, byte))
                    ++alive;
            }
            count[depth] = alive;
            if (alive == 0)
                return false;
            const TokenTrie::Node &cn = m_trie->nodes()[child];
            if (cn.tokenBegin != cn.tokenEnd) {
                int64_t cost = kInfiniteLen;
                for (size_t k = 0; k < alive; ++k) {
                    const Live &l = next[k];
                    const Thread &t = m_threads[l.thread];
                    const size_t el = p.code[t.pc].element;
                    cost = std::min(cost, valueRemaining(p.recognizers[el], l.json, m_list->elements[el].raw) +
                                              p.rest[t.pc + 1]);
                }
                options.push_back({-1, child, cost});
            }
            return true;
        });
    }

    const int64_t limit = affordableCost(options, limit0, false, [](const Option &o) { return o.cost; });
    for (const Option &o : options) {
        if (o.cost > limit)
            continue;
        if (o.token < 0) {
            m_trie->markTokens(o.node, mask);
            continue;
        }
        if (size_t(o.token) >= mask.size())
            mask.resize(size_t(o.token) + 1, false);
        mask[size_t(o.token)] = true;
    }
}

void ArgumentListConstraint::accept(int32_t token)
{
    ++m_used;
    const Program &p = *m_program;
    const bool ordinary = token >= 0 && size_t(token) < m_trie->vocabSize() && !m_trie->bytes(token).empty();
    std::vector<Thread> next;
    for (Thread &t : m_threads) {
        const Program::Instr &in = p.code[t.pc];
        if (in.op == Program::Op::Tokens) {
            if (in.tokens[t.pos] == token)
                next.push_back({t.pc, t.pos + 1, true, {}});
        } else if (in.op == Program::Op::Value && ordinary) {
            const JsonRecognizer &rec = p.recognizers[in.element];
            const bool raw = m_list->elements[in.element].raw;
            Thread n = t;
            bool alive = true;
            for (const char c : m_trie->bytes(token))
                if (!(alive = feedStop(m_list->stop, p.fail, n.pos, uint8_t(c)) && feedValue(rec, n.json, raw, uint8_t(c))))
                    break;
            if (alive)
                next.push_back(std::move(n));
        }
    }
    if (next.empty())
        throw Error(ErrorCode::Argument, "constrained decoding: token " + std::to_string(token) +
                                             " does not continue the tool call's arguments");
    settle(next);
    m_threads = std::move(next);
    m_done = std::any_of(m_threads.begin(), m_threads.end(),
                         [&](const Thread &t) { return p.code[t.pc].op == Program::Op::End; });
}

} // namespace waste::text
