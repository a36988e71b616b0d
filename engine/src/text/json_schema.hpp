// JSON Schema, compiled into the graph that the constrained-decoding recognizer walks.
//
// Supported (the OpenAI structured-output subset and a little more): "type" (one or
// a list), object "properties" / "required" / "additionalProperties" (false, true,
// or a schema; absent means allowed, as in JSON Schema), array "items" /
// "minItems" / "maxItems", "enum", "const", "anyOf" / "oneOf", "$ref" to "#/..."
// (recursion included), "nullable", string "minLength" / "maxLength", "allOf" of one. Annotations ("description", "title",
// "default", "examples", "strict", "$schema", "$defs", "definitions") are ignored.
// Value checks the recognizer cannot enforce byte by byte ("pattern", "format",
// "minimum", "multipleOf", ...) are ignored too; anything else is refused with a
// one-line waste::Error so a caller never believes a constraint holds when it does not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace waste::text {

struct SchemaNode;

struct SchemaProperty {
    std::string name;      // raw (decoded) name
    std::string canonical; // the name as it must appear between the quotes (JSON-escaped)
    const SchemaNode *schema = nullptr;
    bool required = false;
};

struct SchemaNode {
    enum Type : uint8_t {
        Object = 1,
        Array = 2,
        String = 4,
        Number = 8,
        Integer = 16,
        Boolean = 32,
        Null = 64,
        AnyType = 127,
    };
    uint8_t types = AnyType;

    // object
    std::vector<SchemaProperty> properties; // at most 64
    uint64_t requiredMask = 0;
    const SchemaNode *additional = nullptr; // schema of extra keys; nullptr: none allowed

    // string: length in code points (an escape counts as one)
    uint32_t minChars = 0;
    uint32_t maxChars = UINT32_MAX;

    // array
    const SchemaNode *items = nullptr; // never null once compiled (the "any" node if absent)
    uint32_t minItems = 0;
    uint32_t maxItems = UINT32_MAX;

    // enum / const: the canonical (compact) JSON text of each allowed value; at most 64
    bool isEnum = false;
    std::vector<std::string> literals;

    // anyOf / oneOf: the value matches one of these
    std::vector<const SchemaNode *> anyOf;

    // Bytes of the shortest valid value (saturated; kInfinite if none is finite).
    int64_t minLen = 0;
};

inline constexpr int64_t kInfiniteLen = INT64_C(1) << 40;

class Schema {
public:
    // Compiles a schema given as JSON text. Empty text or "{}" means any JSON value.
    static std::shared_ptr<const Schema> compile(std::string_view schemaJson);
    // A schema accepting any JSON object (response_format json_object).
    static std::shared_ptr<const Schema> anyObject();

    const SchemaNode *root() const { return m_root; }
    const SchemaNode *anyValue() const { return m_any; }

private:
    friend class SchemaCompiler;
    SchemaNode *newNode();

    std::vector<std::unique_ptr<SchemaNode>> m_nodes;
    const SchemaNode *m_root = nullptr;
    const SchemaNode *m_any = nullptr;
};

} // namespace waste::text
