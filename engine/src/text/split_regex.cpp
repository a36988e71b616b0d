#include "text/split_regex.hpp"

#include "text/unicode_props.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cctype>

namespace waste::text {

namespace {

using unicode::Category;

// A set of code points, as a small predicate tree.
struct CharSet {
    enum Kind { Range, Categories, Han, Space, Word, Dot, Union, Intersect } kind = Union;
    bool negate = false;
    bool foldCase = false; // Range: ASCII letters match either case
    uint32_t lo = 0, hi = 0;
    uint32_t mask = 0; // Categories: bit per unicode::Category
    std::vector<CharSet> kids;

    bool test(uint32_t cp) const
    {
        bool r = false;
        switch (kind) {
        case Range:
            r = cp >= lo && cp <= hi;
            if (!r && foldCase && cp < 128 && std::isalpha(static_cast<int>(cp))) {
                const uint32_t other = cp ^ 0x20;
                r = other >= lo && other <= hi;
            }
            break;
        case Categories:
            r = cp != unicode::kInvalid && (mask >> unicode::category(cp)) & 1u;
            break;
        case Han:
            r = cp != unicode::kInvalid && unicode::isHanScript(cp);
            break;
        case Space:
            r = cp != unicode::kInvalid && unicode::isWhiteSpace(cp);
            break;
        case Word: {
            if (cp == unicode::kInvalid)
                break;
            const Category c = unicode::category(cp);
            r = c <= unicode::Lo || c == unicode::Mn || c == unicode::Mc || c == unicode::Me || c == unicode::Nd ||
                c == unicode::Pc;
            break;
        }
        case Dot:
            r = cp != '\n';
            break;
        case Union:
            r = std::any_of(kids.begin(), kids.end(), [cp](const CharSet &k) { return k.test(cp); });
            break;
        case Intersect:
            r = !kids.empty() && std::all_of(kids.begin(), kids.end(), [cp](const CharSet &k) { return k.test(cp); });
            break;
        }
        return r != negate;
    }
};

uint32_t bits(std::initializer_list<Category> cats)
{
    uint32_t m = 0;
    for (Category c : cats)
        m |= 1u << c;
    return m;
}

// A continuation: what must match after the current node, from a position.
struct Cont {
    const void *obj;
    bool (*fn)(const void *, size_t);
    bool operator()(size_t p) const { return fn(obj, p); }
};
template <class F>
Cont cont(const F &f)
{
    return {&f, [](const void *o, size_t p) { return (*static_cast<const F *>(o))(p); }};
}

} // namespace

struct SplitRegex::Node {
    enum Kind { Set, Seq, Alt, Repeat, Look } kind = Seq;
    CharSet set;
    std::vector<std::unique_ptr<Node>> kids;
    int min = 0, max = -1; // Repeat; max -1: unbounded
    bool lazy = false, possessive = false;
    bool negative = false; // Look
};

namespace {

using Node = SplitRegex::Node;

class Parser {
public:
    Parser(std::string_view pattern) : m_pattern(pattern), m_cps(unicode::decodeUtf8(pattern).cps) {}

    std::unique_ptr<Node> parse()
    {
        auto root = alternation(false);
        if (m_pos < m_cps.size())
            fail("unbalanced ')'");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string &what) const
    {
        throw Error(ErrorCode::Format, "tokenizer split pattern '" + std::string(m_pattern) + "': " + what +
                                           " (at character " + std::to_string(m_pos) + ")");
    }
    bool at(uint32_t c) const { return m_pos < m_cps.size() && m_cps[m_pos] == c; }
    bool atSeq(std::string_view s) const
    {
        for (size_t i = 0; i < s.size(); ++i)
            if (m_pos + i >= m_cps.size() || m_cps[m_pos + i] != static_cast<unsigned char>(s[i]))
                return false;
        return true;
    }
    uint32_t next()
    {
        if (m_pos >= m_cps.size())
            fail("unexpected end of pattern");
        return m_cps[m_pos++];
    }

    std::unique_ptr<Node> alternation(bool ci)
    {
        auto alt = std::make_unique<Node>();
        alt->kind = Node::Alt;
        alt->kids.push_back(sequence(ci));
        while (at('|')) {
            ++m_pos;
            alt->kids.push_back(sequence(ci));
        }
        if (alt->kids.size() == 1)
            return std::move(alt->kids.front());
        return alt;
    }

    std::unique_ptr<Node> sequence(bool ci)
    {
        auto seq = std::make_unique<Node>();
        seq->kind = Node::Seq;
        while (m_pos < m_cps.size() && !at('|') && !at(')'))
            seq->kids.push_back(quantified(ci));
        return seq;
    }

    int number()
    {
        int v = 0;
        bool any = false;
        while (m_pos < m_cps.size() && m_cps[m_pos] >= '0' && m_cps[m_pos] <= '9') {
            v = std::min(v * 10 + int(m_cps[m_pos++] - '0'), 1 << 20);
            any = true;
        }
        if (!any)
            fail("expected a number in a {} quantifier");
        return v;
    }

    std::unique_ptr<Node> quantified(bool ci)
    {
        auto atomNode = atom(ci);
        for (;;) {
            int lo, hi;
            if (at('?')) {
                lo = 0, hi = 1;
            } else if (at('*')) {
                lo = 0, hi = -1;
            } else if (at('+')) {
                lo = 1, hi = -1;
            } else if (at('{')) {
                ++m_pos;
                lo = number();
                hi = lo;
                if (at(',')) {
                    ++m_pos;
                    hi = at('}') ? -1 : number();
                }
                if (!at('}'))
                    fail("expected '}'");
                if (hi >= 0 && hi < lo)
                    fail("a {n,m} quantifier with m < n");
            } else {
                return atomNode;
            }
            ++m_pos; // past the quantifier's last character
            auto rep = std::make_unique<Node>();
            rep->kind = Node::Repeat;
            rep->min = lo;
            rep->max = hi;
            if (at('?')) {
                rep->lazy = true;
                ++m_pos;
            } else if (at('+')) {
                rep->possessive = true;
                ++m_pos;
            }
            rep->kids.push_back(std::move(atomNode));
            atomNode = std::move(rep);
        }
    }

    std::unique_ptr<Node> setNode(CharSet s)
    {
        auto n = std::make_unique<Node>();
        n->kind = Node::Set;
        n->set = std::move(s);
        return n;
    }

    std::unique_ptr<Node> atom(bool ci)
    {
        const uint32_t c = next();
        if (c == '(') {
            std::unique_ptr<Node> inner;
            if (atSeq("?:")) {
                m_pos += 2;
                inner = alternation(ci);
            } else if (atSeq("?i:")) {
                m_pos += 3;
                inner = alternation(true);
            } else if (atSeq("?=") || atSeq("?!")) {
                const bool neg = m_cps[m_pos + 1] == '!';
                m_pos += 2;
                inner = std::make_unique<Node>();
                inner->kind = Node::Look;
                inner->negative = neg;
                inner->kids.push_back(alternation(ci));
            } else if (at('?')) {
                fail("this group kind is not supported (only (?:...), (?i:...), (?=...), (?!...))");
            } else {
                inner = alternation(ci);
            }
            if (!at(')'))
                fail("missing ')'");
            ++m_pos;
            return inner;
        }
        if (c == '[')
            return setNode(charClass(ci));
        if (c == '.') {
            CharSet s;
            s.kind = CharSet::Dot;
            return setNode(s);
        }
        if (c == '^' || c == '$')
            fail("anchors are not supported");
        if (c == ')' || c == '*' || c == '+' || c == '?' || c == '{')
            fail("a quantifier or ')' with nothing before it");
        if (c == '\\')
            return setNode(escape(ci));
        return setNode(literal(c, ci));
    }

    static CharSet literal(uint32_t c, bool ci)
    {
        CharSet s;
        s.kind = CharSet::Range;
        s.lo = s.hi = c;
        s.foldCase = ci;
        return s;
    }

    uint32_t hexDigits(size_t count)
    {
        uint32_t v = 0;
        for (size_t i = 0; i < count; ++i) {
            const uint32_t h = next();
            const int d = h < 128 && std::isxdigit(static_cast<int>(h)) ? (std::isdigit(static_cast<int>(h)) ? int(h - '0') : (std::tolower(static_cast<int>(h)) - 'a' + 10)) : -1;
            if (d < 0)
                fail("a bad hexadecimal escape");
            v = v * 16 + uint32_t(d);
        }
        return v;
    }

    CharSet property(bool negated)
    {
        if (!at('{'))
            fail("\\p needs a {name}");
        ++m_pos;
        std::string name;
        while (!at('}'))
            name.push_back(static_cast<char>(std::tolower(static_cast<int>(next() & 0x7F))));
        ++m_pos;
        if (!name.empty() && name[0] == '^') {
            negated = !negated;
            name.erase(0, 1);
        }
        for (const char *prefix : {"script=", "sc="})
            if (name.rfind(prefix, 0) == 0)
                name.erase(0, std::string_view(prefix).size());
        CharSet s;
        s.negate = negated;
        if (name == "han" || name == "hani") {
            s.kind = CharSet::Han;
            return s;
        }
        s.kind = CharSet::Categories;
        using namespace unicode;
        static const std::pair<const char *, uint32_t> kNames[] = {
            {"l", bits({Lu, Ll, Lt, Lm, Lo})}, {"letter", bits({Lu, Ll, Lt, Lm, Lo})},
            {"lu", bits({Lu})}, {"ll", bits({Ll})}, {"lt", bits({Lt})}, {"lm", bits({Lm})}, {"lo", bits({Lo})},
            {"m", bits({Mn, Mc, Me})}, {"mark", bits({Mn, Mc, Me})}, {"mn", bits({Mn})}, {"mc", bits({Mc})}, {"me", bits({Me})},
            {"n", bits({Nd, Nl, No})}, {"number", bits({Nd, Nl, No})}, {"nd", bits({Nd})}, {"nl", bits({Nl})}, {"no", bits({No})},
            {"p", bits({Pc, Pd, Ps, Pe, Pi, Pf, Po})}, {"punctuation", bits({Pc, Pd, Ps, Pe, Pi, Pf, Po})},
            {"pc", bits({Pc})}, {"pd", bits({Pd})}, {"ps", bits({Ps})}, {"pe", bits({Pe})}, {"pi", bits({Pi})},
            {"pf", bits({Pf})}, {"po", bits({Po})},
            {"s", bits({Sm, Sc, Sk, So})}, {"symbol", bits({Sm, Sc, Sk, So})},
            {"sm", bits({Sm})}, {"sc", bits({Sc})}, {"sk", bits({Sk})}, {"so", bits({So})},
            {"z", bits({Zs, Zl, Zp})}, {"separator", bits({Zs, Zl, Zp})}, {"zs", bits({Zs})}, {"zl", bits({Zl})}, {"zp", bits({Zp})},
            {"c", bits({Cc, Cf, Cs, Co, Cn})}, {"other", bits({Cc, Cf, Cs, Co, Cn})},
            {"cc", bits({Cc})}, {"cf", bits({Cf})}, {"cs", bits({Cs})}, {"co", bits({Co})}, {"cn", bits({Cn})},
        };
        for (const auto &[n, m] : kNames) {
            if (name == n) {
                s.mask = m;
                return s;
            }
        }
        fail("the property \\p{" + name + "} is not supported");
    }

    // After a backslash: a class escape or one character.
    CharSet escape(bool ci)
    {
        const uint32_t c = next();
        CharSet s;
        switch (c) {
        case 'p':
        case 'P':
            return property(c == 'P');
        case 's':
        case 'S':
            s.kind = CharSet::Space;
            s.negate = c == 'S';
            return s;
        case 'd':
        case 'D':
            s.kind = CharSet::Categories;
            s.mask = 1u << unicode::Nd;
            s.negate = c == 'D';
            return s;
        case 'w':
        case 'W':
            s.kind = CharSet::Word;
            s.negate = c == 'W';
            return s;
        case 't':
            return literal('\t', ci);
        case 'n':
            return literal('\n', ci);
        case 'r':
            return literal('\r', ci);
        case 'f':
            return literal('\f', ci);
        case 'v':
            return literal('\v', ci);
        case 'x':
            if (at('{')) {
                ++m_pos;
                uint32_t v = 0;
                while (!at('}'))
                    v = v * 16 + hexDigits(1);
                ++m_pos;
                return literal(v, ci);
            }
            return literal(hexDigits(2), ci);
        case 'u':
            return literal(hexDigits(4), ci);
        default:
            if (c < 128 && std::isalnum(static_cast<int>(c)))
                fail(std::string("the escape \\") + char(c) + " is not supported");
            return literal(c, ci); // an escaped punctuation character stands for itself
        }
    }

    // After '[': items up to the matching ']', with && intersections.
    CharSet charClass(bool ci)
    {
        CharSet result;
        result.kind = CharSet::Union;
        if (at('^')) {
            result.negate = true;
            ++m_pos;
        }
        std::vector<CharSet> operands;
        CharSet current;
        current.kind = CharSet::Union;
        bool first = true;
        for (;;) {
            if (m_pos >= m_cps.size())
                fail("missing ']'");
            if (at(']') && !first) {
                ++m_pos;
                break;
            }
            first = false;
            if (atSeq("&&")) {
                m_pos += 2;
                operands.push_back(std::move(current));
                current = CharSet();
                current.kind = CharSet::Union;
                continue;
            }
            const uint32_t c = next();
            if (c == '[') {
                current.kids.push_back(charClass(ci));
                continue;
            }
            CharSet item;
            uint32_t single = 0;
            bool isSingle = false;
            if (c == '\\') {
                item = escape(ci);
                isSingle = item.kind == CharSet::Range && item.lo == item.hi && !item.negate;
                single = item.lo;
            } else {
                item = literal(c, ci);
                isSingle = true;
                single = c;
            }
            if (isSingle && at('-') && m_pos + 1 < m_cps.size() && m_cps[m_pos + 1] != ']') {
                ++m_pos;
                uint32_t hi = next();
                if (hi == '\\') {
                    const CharSet e = escape(ci);
                    if (e.kind != CharSet::Range || e.lo != e.hi)
                        fail("a range must end in a single character");
                    hi = e.lo;
                } else if (hi == '[') {
                    fail("a range must end in a single character");
                }
                if (hi < single)
                    fail("a range whose end comes before its start");
                item = literal(single, ci);
                item.hi = hi;
            }
            current.kids.push_back(std::move(item));
        }
        if (operands.empty()) {
            current.negate = result.negate;
            return current;
        }
        operands.push_back(std::move(current));
        result.kind = CharSet::Intersect;
        result.kids = std::move(operands);
        return result;
    }

    std::string_view m_pattern;
    std::vector<uint32_t> m_cps;
    size_t m_pos = 0;
};

class Matcher {
public:
    explicit Matcher(const std::vector<uint32_t> &cps) : m_cps(cps) {}

    bool match(const Node &n, size_t pos, Cont k) const
    {
        switch (n.kind) {
        case Node::Set:
            return pos < m_cps.size() && n.set.test(m_cps[pos]) && k(pos + 1);
        case Node::Seq:
            return sequence(n, 0, pos, k);
        case Node::Alt:
            for (const auto &kid : n.kids)
                if (match(*kid, pos, k))
                    return true;
            return false;
        case Node::Repeat:
            if (n.kids.front()->kind == Node::Set)
                return repeatSet(n, pos, k);
            if (n.possessive) {
                size_t end = pos;
                const auto take = [&](size_t p) { end = p; return true; };
                repeat(n, 0, pos, cont(take));
                return k(end);
            }
            return repeat(n, 0, pos, k);
        case Node::Look: {
            const auto any = [](size_t) { return true; };
            const bool found = match(*n.kids.front(), pos, cont(any));
            return found != n.negative && k(pos);
        }
        }
        return false;
    }

private:
    bool sequence(const Node &n, size_t i, size_t pos, Cont k) const
    {
        if (i == n.kids.size())
            return k(pos);
        const auto rest = [&](size_t p) { return sequence(n, i + 1, p, k); };
        return match(*n.kids[i], pos, cont(rest));
    }

    // A quantified character set: counted in a loop, then tried longest first (greedy),
    // shortest first (lazy) or only longest (possessive).
    bool repeatSet(const Node &n, size_t pos, Cont k) const
    {
        const CharSet &s = n.kids.front()->set;
        const size_t limit = n.max < 0 ? m_cps.size() - pos : std::min<size_t>(size_t(n.max), m_cps.size() - pos);
        size_t count = 0;
        while (count < limit && s.test(m_cps[pos + count]))
            ++count;
        if (count < size_t(n.min))
            return false;
        if (n.possessive)
            return k(pos + count);
        if (n.lazy) {
            for (size_t c = size_t(n.min); c <= count; ++c)
                if (k(pos + c))
                    return true;
            return false;
        }
        for (size_t c = count + 1; c-- > size_t(n.min);)
            if (k(pos + c))
                return true;
        return false;
    }

    bool repeat(const Node &n, int count, size_t pos, Cont k) const
    {
        const bool canStop = count >= n.min;
        const bool canGo = n.max < 0 || count < n.max;
        const auto again = [&](size_t p) { return (p != pos || !canStop) && repeat(n, count + 1, p, k); };
        if (n.lazy) {
            if (canStop && k(pos))
                return true;
            return canGo && match(*n.kids.front(), pos, cont(again));
        }
        if (canGo && match(*n.kids.front(), pos, cont(again)))
            return true;
        return canStop && k(pos);
    }

    const std::vector<uint32_t> &m_cps;
};

} // namespace

SplitRegex::SplitRegex(std::string_view pattern) : m_root(Parser(pattern).parse()) {}
SplitRegex::~SplitRegex() = default;
SplitRegex::SplitRegex(SplitRegex &&) noexcept = default;
SplitRegex &SplitRegex::operator=(SplitRegex &&) noexcept = default;

std::vector<SplitRegex::Match> SplitRegex::findAll(const std::vector<uint32_t> &cps) const
{
    std::vector<Match> out;
    const Matcher m(cps);
    size_t start = 0;
    while (start < cps.size()) {
        size_t end = 0;
        bool found = false;
        size_t s = start;
        for (; s < cps.size(); ++s) {
            const auto take = [&](size_t p) { end = p; return true; };
            if (m.match(*m_root, s, cont(take))) {
                found = true;
                break;
            }
        }
        if (!found)
            break;
        if (end > s) {
            out.push_back({s, end});
            start = end;
        } else {
            start = s + 1; // an empty match splits nothing
        }
    }
    return out;
}

} // namespace waste::text
