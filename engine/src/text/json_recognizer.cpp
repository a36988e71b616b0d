// The recognizer's transitions for every schema node kind (objects, arrays, strings with
// escapes, numbers, literals, enums, anyOf) and the shortest-completion arithmetic that
// goes with each. Over 600 lines on purpose: they are one state machine, and splitting it by
// node kind would scatter the shared stack discipline across files.
#include "text/json_recognizer.hpp"

#include <algorithm>
#include <string_view>

namespace waste::text {

namespace {

enum Kind : uint8_t { KValue, KObject, KKey, KArray, KString, KNumber, KLiteral, KEnum };
enum ObjectPhase : uint8_t { OOpen, OKey, OColon, OAfterValue, OExpectKey };
enum ArrayPhase : uint8_t { AOpen, AAfterValue, AExpectValue };
enum StringPhase : uint8_t { SNormal, SEscape, SHex };
enum NumberPhase : uint8_t { NMinus, NZero, NInt, NFracStart, NFrac, NExpStart, NExpSign, NExp };

constexpr uint32_t kFreeKey = UINT32_MAX;
constexpr uint32_t kMaxDigits = 16;   // integer and fraction digits
constexpr uint32_t kMaxExpDigits = 2; // keeps every number inside double range
constexpr uint32_t kMaxFreeKeyBytes = 256;
constexpr size_t kMaxStacks = 64;
constexpr std::string_view kLiterals[] = {"true", "false", "null"};

bool isDigit(uint8_t b) { return b >= '0' && b <= '9'; }
bool isHex(uint8_t b) { return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F'); }
bool isWs(uint8_t b) { return b == ' ' || b == '\t' || b == '\n' || b == '\r'; }
uint64_t lowMask(size_t n) { return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1; }

// UTF-8 validation state packed in a byte: low 2 bits = continuation bytes still
// due, bits 2..4 = the allowed range of the next one (RFC 3629 table).
bool utf8Step(uint8_t &u, uint8_t b)
{
    if (u & 3) {
        static constexpr uint8_t lo[] = {0x80, 0xA0, 0x80, 0x90, 0x80};
        static constexpr uint8_t hi[] = {0xBF, 0xBF, 0x9F, 0xBF, 0x8F};
        const uint8_t code = static_cast<uint8_t>(u >> 2);
        if (b < lo[code] || b > hi[code])
            return false;
        u = static_cast<uint8_t>((u & 3) - 1);
        return true;
    }
    if (b < 0x80)
        return true;
    if (b >= 0xC2 && b <= 0xDF)
        u = 1;
    else if (b == 0xE0)
        u = 2 | (1 << 2);
    else if (b == 0xED)
        u = 2 | (2 << 2);
    else if (b >= 0xE1 && b <= 0xEF)
        u = 2;
    else if (b == 0xF0)
        u = 3 | (3 << 2);
    else if (b >= 0xF1 && b <= 0xF3)
        u = 3;
    else if (b == 0xF4)
        u = 3 | (4 << 2);
    else
        return false;
    return true;
}

int64_t propertyCost(const SchemaProperty &p) // ,"name":value
{
    return std::min(kInfiniteLen, 1 + static_cast<int64_t>(p.canonical.size()) + 2 + 1 + p.schema->minLen);
}

uint64_t allProperties(const SchemaNode *n) { return lowMask(n->properties.size()); }

bool keyPossible(const JsonRecognizer::Frame &obj)
{
    return (allProperties(obj.node) & ~obj.bits) != 0 || obj.node->additional != nullptr;
}

bool requiredDone(const JsonRecognizer::Frame &obj) { return (obj.node->requiredMask & ~obj.bits) == 0; }

int64_t requiredCost(const JsonRecognizer::Frame &obj) // sum over required properties not yet written
{
    int64_t s = 0;
    const uint64_t missing = obj.node->requiredMask & ~obj.bits;
    for (size_t i = 0; i < obj.node->properties.size(); ++i)
        if (missing >> i & 1)
            s = std::min(kInfiniteLen, s + propertyCost(obj.node->properties[i]));
    return s;
}

JsonRecognizer::Frame valueFrame(const SchemaNode *n)
{
    JsonRecognizer::Frame f;
    f.node = n;
    f.kind = KValue;
    return f;
}

} // namespace

JsonRecognizer::JsonRecognizer(std::shared_ptr<const Schema> schema, int maxDepth, int maxWhitespace)
    : m_schema(std::move(schema)), m_maxDepth(static_cast<size_t>(std::max(1, maxDepth))),
      m_maxWs(static_cast<uint16_t>(std::clamp(maxWhitespace, 0, 60000)))
{
}

JsonRecognizer::State JsonRecognizer::initial() const
{
    State s;
    s.stacks.emplace_back();
    s.stacks.back().frames.push_back(valueFrame(m_schema->root()));
    return s;
}

JsonRecognizer::Result JsonRecognizer::feedStack(Stack &st, uint8_t b) const
{
    const bool ws = isWs(b);
    if (!ws)
        st.ws = 0;
    auto whitespace = [&]() { return ++st.ws > m_maxWs ? Reject : Ok; };
    auto &fr = st.frames;
    for (;;) {
        if (fr.empty())
            return Reject; // the document is complete: only the end may follow
        Frame &f = fr.back();
        const SchemaNode *n = f.node;
        switch (f.kind) {
        case KValue: {
            if (ws)
                return whitespace();
            if (n->minLen >= kInfiniteLen)
                return Reject; // a schema with no finite value (a reference cycle)
            if (!n->anyOf.empty())
                return Fork;
            if (n->isEnum) {
                f.kind = KEnum;
                f.bits = lowMask(n->literals.size());
                f.count = 0;
                continue;
            }
            Frame g;
            g.node = n;
            if (b == '{' && (n->types & SchemaNode::Object) && fr.size() <= m_maxDepth) {
                g.kind = KObject;
                g.phase = OOpen;
            } else if (b == '[' && (n->types & SchemaNode::Array) && fr.size() <= m_maxDepth) {
                g.kind = KArray;
                g.phase = AOpen;
            } else if (b == '"' && (n->types & SchemaNode::String)) {
                g.kind = KString;
                g.phase = SNormal;
            } else if ((b == '-' || isDigit(b)) && (n->types & (SchemaNode::Number | SchemaNode::Integer))) {
                g.kind = KNumber;
                g.phase = b == '-' ? NMinus : b == '0' ? NZero : NInt;
                g.count = b == '-' ? 0 : 1;
            } else if ((b == 't' || b == 'f') && (n->types & SchemaNode::Boolean)) {
                g.kind = KLiteral;
                g.sub = b == 't' ? 0 : 1;
                g.count = 1;
            } else if (b == 'n' && (n->types & SchemaNode::Null)) {
                g.kind = KLiteral;
                g.sub = 2;
                g.count = 1;
            } else {
                return Reject;
            }
            f = g;
            return Ok;
        }
        case KObject: {
            if (ws)
                return whitespace();
            auto openKey = [&]() {
                f.phase = OKey;
                Frame k;
                k.node = n;
                k.kind = KKey;
                k.bits = allProperties(n);
                k.flags = n->additional ? 1 : 0;
                fr.push_back(k);
                return Ok;
            };
            switch (f.phase) {
            case OOpen:
                if (b == '}' && requiredDone(f)) {
                    fr.pop_back();
                    return Ok;
                }
                if (b == '"' && keyPossible(f))
                    return openKey();
                return Reject;
            case OExpectKey:
                return b == '"' && keyPossible(f) ? openKey() : Reject;
            case OColon: {
                if (b != ':')
                    return Reject;
                f.phase = OAfterValue;
                const SchemaNode *v = f.count == kFreeKey ? n->additional : n->properties[f.count].schema;
                fr.push_back(valueFrame(v));
                return Ok;
            }
            case OAfterValue:
                if (b == ',' && keyPossible(f)) {
                    f.phase = OExpectKey;
                    return Ok;
                }
                if (b == '}' && requiredDone(f)) {
                    fr.pop_back();
                    return Ok;
                }
                return Reject;
            default:
                return Reject;
            }
        }
        case KKey: {
            Frame &obj = fr[fr.size() - 2];
            const bool escaped = f.flags & 2; // the previous byte was a backslash (declared names only)
            if (b == '"' && !escaped) {
                uint32_t selected = kFreeKey;
                bool exact = false;
                for (size_t i = 0; i < n->properties.size(); ++i) {
                    if ((f.bits >> i & 1) && n->properties[i].canonical.size() == f.count) {
                        selected = static_cast<uint32_t>(i);
                        exact = true;
                    }
                }
                if (exact) {
                    if (obj.bits >> selected & 1)
                        return Reject; // a key may appear once
                    obj.bits |= uint64_t(1) << selected;
                } else if (!(f.flags & 1) || (f.sub & 3)) {
                    return Reject;
                }
                fr.pop_back();
                fr.back().phase = OColon;
                fr.back().count = selected;
                return Ok;
            }
            const bool midChar = (f.sub & 3) != 0; // a character's continuation bytes may pass the key's cap
            if (b < 0x20 || !utf8Step(f.sub, b))
                return Reject;
            uint64_t next = 0;
            for (size_t i = 0; i < n->properties.size(); ++i) {
                const std::string &c = n->properties[i].canonical;
                if ((f.bits >> i & 1) && f.count < c.size() && static_cast<uint8_t>(c[f.count]) == b)
                    next |= uint64_t(1) << i;
            }
            // The cap counts bytes but never cuts a character: once it is reached, only the
            // continuation bytes of the character under way and then the closing quote fit.
            const bool free = (f.flags & 1) && b != '\\' && (f.count < kMaxFreeKeyBytes || midChar);
            if ((next & ~obj.bits) == 0 && !free)
                return Reject;
            f.bits = next;
            f.flags = static_cast<uint8_t>((free ? 1 : 0) | (b == '\\' && !escaped ? 2 : 0));
            ++f.count;
            return Ok;
        }
        case KArray: {
            if (ws)
                return whitespace();
            switch (f.phase) {
            case AOpen:
                if (b == ']') {
                    if (n->minItems != 0)
                        return Reject;
                    fr.pop_back();
                    return Ok;
                }
                if (n->maxItems == 0)
                    return Reject;
                f.phase = AAfterValue;
                f.count = 1;
                fr.push_back(valueFrame(n->items));
                continue;
            case AAfterValue:
                if (b == ',' && f.count < n->maxItems) {
                    f.phase = AExpectValue;
                    return Ok;
                }
                if (b == ']' && f.count >= n->minItems) {
                    fr.pop_back();
                    return Ok;
                }
                return Reject;
            case AExpectValue:
                f.phase = AAfterValue;
                ++f.count;
                fr.push_back(valueFrame(n->items));
                continue;
            default:
                return Reject;
            }
        }
        case KString:
            switch (f.phase) {
            case SNormal:
                if (f.sub & 3)
                    return utf8Step(f.sub, b) ? Ok : Reject;
                if (b == '"') {
                    if (f.count < n->minChars)
                        return Reject;
                    fr.pop_back();
                    return Ok;
                }
                if (b < 0x20 || f.count >= n->maxChars)
                    return Reject;
                ++f.count;
                if (b == '\\') {
                    f.phase = SEscape;
                    return Ok;
                }
                return utf8Step(f.sub, b) ? Ok : Reject;
            case SEscape:
                if (b == 'u') {
                    f.phase = SHex;
                    f.sub = 0;
                    f.flags = 0;
                    return Ok;
                }
                if (std::string_view("\"\\/bfnrt").find(static_cast<char>(b)) == std::string_view::npos)
                    return Reject;
                f.phase = SNormal;
                return Ok;
            case SHex:
                if (!isHex(b))
                    return Reject;
                if (f.sub == 0 && (b == 'd' || b == 'D'))
                    f.flags = 1;
                if (f.sub == 1 && f.flags && !(b >= '0' && b <= '7'))
                    return Reject; // no surrogate escapes: write the character as UTF-8
                if (++f.sub == 4) {
                    f.phase = SNormal;
                    f.sub = 0;
                }
                return Ok;
            default:
                return Reject;
            }
        case KNumber: {
            const bool integerOnly = !(n->types & SchemaNode::Number);
            const bool digit = isDigit(b);
            bool end = false;
            switch (f.phase) {
            case NMinus:
                if (!digit)
                    return Reject;
                f.phase = b == '0' ? NZero : NInt;
                f.count = 1;
                return Ok;
            case NZero:
            case NInt:
                if (digit) {
                    if (f.phase == NZero || f.count >= kMaxDigits)
                        return Reject;
                    ++f.count;
                    return Ok;
                }
                if (!integerOnly && b == '.') {
                    f.phase = NFracStart;
                    return Ok;
                }
                if (!integerOnly && (b == 'e' || b == 'E')) {
                    f.phase = NExpStart;
                    return Ok;
                }
                end = true;
                break;
            case NFracStart:
                if (!digit)
                    return Reject;
                f.phase = NFrac;
                f.count = 1;
                return Ok;
            case NFrac:
                if (digit)
                    return ++f.count > kMaxDigits ? Reject : Ok;
                if (b == 'e' || b == 'E') {
                    f.phase = NExpStart;
                    return Ok;
                }
                end = true;
                break;
            case NExpStart:
                if (b == '+' || b == '-') {
                    f.phase = NExpSign;
                    return Ok;
                }
                [[fallthrough]];
            case NExpSign:
                if (!digit)
                    return Reject;
                f.phase = NExp;
                f.count = 1;
                return Ok;
            case NExp:
                if (digit)
                    return ++f.count > kMaxExpDigits ? Reject : Ok;
                end = true;
                break;
            default:
                return Reject;
            }
            if (end) {
                fr.pop_back(); // the number ended; the byte belongs to the parent
                if (!ws)
                    st.ws = 0;
                continue;
            }
            return Reject;
        }
        case KLiteral: {
            const std::string_view lit = kLiterals[f.sub];
            if (f.count >= lit.size() || static_cast<uint8_t>(lit[f.count]) != b)
                return Reject;
            if (++f.count == lit.size())
                fr.pop_back();
            return Ok;
        }
        case KEnum: {
            uint64_t next = 0;
            bool completeNow = false, longer = false, completeBefore = false;
            for (size_t i = 0; i < n->literals.size(); ++i) {
                if (!(f.bits >> i & 1))
                    continue;
                const std::string &l = n->literals[i];
                if (l.size() == f.count)
                    completeBefore = true;
                if (f.count < l.size() && static_cast<uint8_t>(l[f.count]) == b) {
                    next |= uint64_t(1) << i;
                    if (l.size() == f.count + 1)
                        completeNow = true;
                    else
                        longer = true;
                }
            }
            if (next) {
                f.bits = next;
                ++f.count;
                if (completeNow && !longer)
                    fr.pop_back();
                return Ok;
            }
            if (completeBefore) {
                fr.pop_back(); // e.g. enum [1, 12] after "1": the byte belongs to the parent
                continue;
            }
            return Reject;
        }
        default:
            return Reject;
        }
    }
}

bool JsonRecognizer::feed(State &s, uint8_t byte) const
{
    auto &v = s.stacks;
    size_t i = 0;
    while (i < v.size()) {
        const Result r = feedStack(v[i], byte);
        if (r == Ok) {
            ++i;
        } else if (r == Reject) {
            if (i + 1 != v.size())
                std::swap(v[i], v.back());
            v.pop_back();
        } else { // Fork: try every branch of the union; the extra stacks are fed later in this loop
            const SchemaNode *n = v[i].frames.back().node;
            for (size_t k = 1; k < n->anyOf.size() && v.size() < kMaxStacks; ++k) {
                Stack copy = v[i];
                copy.frames.back().node = n->anyOf[k];
                v.push_back(std::move(copy));
            }
            v[i].frames.back().node = n->anyOf[0];
        }
    }
    return !v.empty();
}

bool JsonRecognizer::stackCanEnd(const Stack &st) const
{
    if (st.frames.empty())
        return true;
    if (st.frames.size() != 1)
        return false;
    const Frame &f = st.frames.back();
    if (f.kind == KNumber)
        return f.phase == NZero || f.phase == NInt || f.phase == NFrac || f.phase == NExp;
    if (f.kind == KEnum) {
        for (size_t i = 0; i < f.node->literals.size(); ++i)
            if ((f.bits >> i & 1) && f.node->literals[i].size() == f.count)
                return true;
    }
    return false;
}

bool JsonRecognizer::canEnd(const State &s) const
{
    return std::any_of(s.stacks.begin(), s.stacks.end(), [&](const Stack &st) { return stackCanEnd(st); });
}

bool JsonRecognizer::closed(const State &s) const
{
    return !s.stacks.empty() &&
           std::all_of(s.stacks.begin(), s.stacks.end(), [](const Stack &st) { return st.frames.empty(); });
}

int64_t JsonRecognizer::stackCost(const Stack &st) const
{
    int64_t total = 0;
    const auto &fr = st.frames;
    for (size_t idx = 0; idx < fr.size(); ++idx) {
        const Frame &f = fr[idx];
        const SchemaNode *n = f.node;
        int64_t c = 0;
        switch (f.kind) {
        case KValue:
            c = n->minLen;
            break;
        case KObject: {
            const int64_t req = requiredCost(f);
            const bool none = (n->requiredMask & ~f.bits) == 0;
            switch (f.phase) {
            case OOpen:
                c = none ? 1 : req;
                break;
            case OKey:
            case OAfterValue:
                c = req + 1;
                break;
            case OColon: {
                const SchemaNode *v = f.count == kFreeKey ? n->additional : n->properties[f.count].schema;
                c = 1 + v->minLen + req + 1;
                break;
            }
            case OExpectKey:
                if (none) {
                    int64_t best = kInfiniteLen;
                    for (size_t i = 0; i < n->properties.size(); ++i)
                        if (!(f.bits >> i & 1))
                            best = std::min(best, propertyCost(n->properties[i]) - 1);
                    if (n->additional)
                        best = std::min(best, 3 + n->additional->minLen);
                    c = best + 1;
                } else {
                    c = req;
                }
                break;
            default:
                break;
            }
            break;
        }
        case KKey: {
            const Frame &obj = fr[idx - 1];
            const uint64_t missing = n->requiredMask & ~obj.bits;
            int64_t best = kInfiniteLen;
            for (size_t i = 0; i < n->properties.size(); ++i) {
                if (!(f.bits >> i & 1) || (obj.bits >> i & 1))
                    continue;
                const SchemaProperty &p = n->properties[i];
                int64_t k = static_cast<int64_t>(p.canonical.size() - f.count) + 2 + p.schema->minLen;
                if (missing >> i & 1)
                    k -= propertyCost(p); // the object's own cost counted this property
                best = std::min(best, k);
            }
            if ((f.flags & 1) && n->additional)
                best = std::min(best, static_cast<int64_t>(f.sub & 3) + 2 + n->additional->minLen);
            c = best;
            break;
        }
        case KArray: {
            const int64_t m = n->items->minLen;
            const int64_t need = std::max<int64_t>(0, static_cast<int64_t>(n->minItems) - f.count);
            if (f.phase == AOpen)
                c = n->minItems == 0 ? 1 : static_cast<int64_t>(n->minItems) * (m + 1);
            else if (f.phase == AAfterValue)
                c = need * (m + 1) + 1;
            else
                c = m + std::max<int64_t>(0, need - 1) * (m + 1) + 1;
            break;
        }
        case KString: {
            const int64_t chars = std::max<int64_t>(0, static_cast<int64_t>(n->minChars) - f.count);
            if (f.phase == SNormal)
                c = (f.sub & 3) + chars + 1;
            else if (f.phase == SEscape)
                c = 1 + chars + 1;
            else
                c = (4 - f.sub) + chars + 1;
            break;
        }
        case KNumber:
            c = (f.phase == NMinus || f.phase == NFracStart || f.phase == NExpStart || f.phase == NExpSign) ? 1 : 0;
            break;
        case KLiteral:
            c = static_cast<int64_t>(kLiterals[f.sub].size() - f.count);
            break;
        case KEnum: {
            int64_t best = kInfiniteLen;
            for (size_t i = 0; i < n->literals.size(); ++i)
                if (f.bits >> i & 1)
                    best = std::min(best, static_cast<int64_t>(n->literals[i].size() - f.count));
            c = best;
            break;
        }
        default:
            break;
        }
        total = std::min(kInfiniteLen, total + c);
    }
    return total;
}

int64_t JsonRecognizer::minRemaining(const State &s) const
{
    int64_t best = kInfiniteLen;
    for (const Stack &st : s.stacks)
        best = std::min(best, stackCost(st));
    return best;
}

} // namespace waste::text
