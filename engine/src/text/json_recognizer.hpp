// A byte-at-a-time recognizer for JSON documents that match a compiled schema.
//
// The state is a small set of pushdown stacks (more than one only while an anyOf
// is undecided). feed() says whether a byte can continue a valid document;
// minRemaining() is the fewest bytes that still complete it, which lets the
// constraint keep every document closable within a token budget. States are plain
// values: copying one is how the token mask explores candidate tokens.
#pragma once

#include "text/json_schema.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace waste::text {

class JsonRecognizer {
public:
    struct Frame {
        const SchemaNode *node = nullptr;
        uint8_t kind = 0;
        uint8_t phase = 0;
        uint8_t sub = 0;   // string: UTF-8 state or hex position; literal: which one
        uint8_t flags = 0; // key: free-key path viable; string: first hex digit was 'd'
        uint32_t count = 0; // array items, literal/enum/key position, digits, string chars
        uint64_t bits = 0;  // object: properties used; key/enum: candidates
    };
    struct Stack {
        std::vector<Frame> frames;
        uint16_t ws = 0; // consecutive structural whitespace
    };
    struct State {
        std::vector<Stack> stacks;
    };

    // `maxDepth` bounds nesting; `maxWhitespace` bounds runs of whitespace between tokens.
    explicit JsonRecognizer(std::shared_ptr<const Schema> schema, int maxDepth = 32, int maxWhitespace = 32);

    State initial() const;
    // Advances `s` by one byte; false (and `s` unusable) if no valid document continues so.
    bool feed(State &s, uint8_t byte) const;
    // True if the bytes so far form a complete valid document.
    bool canEnd(const State &s) const;
    // True if the top-level value has closed (an object, array or string): no byte can follow.
    bool closed(const State &s) const;
    // Fewest further bytes that complete a valid document.
    int64_t minRemaining(const State &s) const;

    const Schema &schema() const { return *m_schema; }

private:
    enum Result { Reject, Ok, Fork };
    Result feedStack(Stack &st, uint8_t b) const;
    bool stackCanEnd(const Stack &st) const;
    int64_t stackCost(const Stack &st) const;
    int64_t objectOpenCost(const Frame &obj) const;

    std::shared_ptr<const Schema> m_schema;
    size_t m_maxDepth;
    uint16_t m_maxWs;
};

} // namespace waste::text
