#include "text/json_schema.hpp"

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace waste::text {

using nlohmann::json;

namespace {

constexpr size_t kMaxProperties = 64;
constexpr size_t kMaxLiterals = 64;

[[noreturn]] void refuse(const std::string &path, const std::string &what)
{
    throw Error(ErrorCode::Unsupported, "JSON schema at " + (path.empty() ? std::string("#") : path) + ": " + what);
}

// Keywords that carry no constraint, or one we knowingly leave to the caller.
const std::set<std::string, std::less<>> kIgnored = {
    "description", "title", "default", "examples", "strict", "$schema", "$id", "$defs", "definitions",
    "$comment", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "readOnly", "writeOnly", "deprecated", "contentEncoding", "contentMediaType", "name",
    "example", "x-order"};

int64_t satAdd(int64_t a, int64_t b) { return std::min(kInfiniteLen, a + b); }
int64_t satMul(int64_t a, int64_t n)
{
    if (n == 0)
        return 0;
    return a >= kInfiniteLen / n ? kInfiniteLen : a * n;
}

} // namespace

class SchemaCompiler {
public:
    SchemaCompiler(Schema &schema, const json &document) : m_schema(schema), m_doc(document) {}

    SchemaNode *any()
    {
        if (!m_any) {
            m_any = m_schema.newNode();
            m_any->types = SchemaNode::AnyType;
            m_any->additional = m_any;
            m_any->items = m_any;
        }
        return m_any;
    }

    const SchemaNode *compile(const json &s, const std::string &path)
    {
        SchemaNode *n = m_schema.newNode();
        compileInto(n, s, path);
        return n;
    }

    void compileInto(SchemaNode *n, const json &s, const std::string &path)
    {
        if (s.is_boolean()) {
            if (!s.get<bool>())
                refuse(path, "'false' admits no value");
            copyAny(n);
            return;
        }
        if (!s.is_object())
            refuse(path, "a schema must be an object");
        if (s.contains("$ref")) {
            const SchemaNode *target = resolveRef(s.at("$ref"), path);
            n->anyOf = {target}; // a one-branch union: the recognizer follows it without forking
            return;
        }
        for (const auto &[key, value] : s.items()) {
            static const std::set<std::string, std::less<>> known = {
                "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
                "enum", "const", "anyOf", "oneOf", "allOf", "nullable", "minLength", "maxLength"};
            if (!known.count(key) && !kIgnored.count(key))
                refuse(path, "keyword '" + key + "' is not supported");
        }
        if (s.contains("allOf")) {
            const json &all = s.at("allOf");
            if (!all.is_array() || all.size() != 1)
                refuse(path, "'allOf' is supported only with a single schema");
            for (const auto &[key, value] : s.items())
                if (key != "allOf" && !kIgnored.count(key))
                    refuse(path, "'allOf' cannot be combined with '" + key + "'");
            n->anyOf = {compile(all[0], path + "/allOf/0")};
            return;
        }
        for (const char *kw : {"anyOf", "oneOf"}) {
            if (!s.contains(kw))
                continue;
            const json &alts = s.at(kw);
            if (!alts.is_array() || alts.empty())
                refuse(path, std::string("'") + kw + "' must be a non-empty array");
            for (const auto &[key, value] : s.items())
                if (key != kw && key != "nullable" && !kIgnored.count(key))
                    refuse(path, std::string("'") + kw + "' cannot be combined with '" + key + "'");
            for (size_t i = 0; i < alts.size(); ++i)
                n->anyOf.push_back(compile(alts[i], path + "/" + kw + "/" + std::to_string(i)));
            if (s.value("nullable", false)) {
                SchemaNode *null = m_schema.newNode();
                null->types = SchemaNode::Null;
                n->anyOf.push_back(null);
            }
            return;
        }
        if (s.contains("enum") || s.contains("const")) {
            n->isEnum = true;
            std::vector<json> values;
            if (s.contains("const"))
                values.push_back(s.at("const"));
            if (s.contains("enum")) {
                if (!s.at("enum").is_array() || s.at("enum").empty())
                    refuse(path, "'enum' must be a non-empty array");
                for (const json &v : s.at("enum"))
                    values.push_back(v);
            }
            if (s.value("nullable", false))
                values.push_back(nullptr);
            for (const json &v : values) {
                std::string lit = v.dump();
                if (std::find(n->literals.begin(), n->literals.end(), lit) == n->literals.end())
                    n->literals.push_back(std::move(lit));
            }
            if (n->literals.size() > kMaxLiterals)
                refuse(path, "more than " + std::to_string(kMaxLiterals) + " enum values");
            return;
        }

        n->types = SchemaNode::AnyType;
        if (s.contains("type")) {
            n->types = 0;
            const json &t = s.at("type");
            std::vector<json> list = t.is_array() ? t.get<std::vector<json>>() : std::vector<json>{t};
            for (const json &one : list) {
                if (!one.is_string())
                    refuse(path, "'type' must be a string or a list of strings");
                n->types |= typeBit(one.get<std::string>(), path);
            }
            if (n->types == 0)
                refuse(path, "'type' is an empty list");
        }
        if (s.value("nullable", false))
            n->types |= SchemaNode::Null;

        // object
        n->additional = any();
        if (s.contains("properties")) {
            const json &props = s.at("properties");
            if (!props.is_object())
                refuse(path, "'properties' must be an object");
            for (const auto &[name, sub] : props.items())
                addProperty(n, name, compile(sub, path + "/properties/" + name));
        }
        if (s.contains("additionalProperties")) {
            const json &ap = s.at("additionalProperties");
            if (ap.is_boolean())
                n->additional = ap.get<bool>() ? any() : nullptr;
            else
                n->additional = compile(ap, path + "/additionalProperties");
        }
        if (s.contains("required")) {
            const json &req = s.at("required");
            if (!req.is_array())
                refuse(path, "'required' must be an array");
            for (const json &r : req) {
                if (!r.is_string())
                    refuse(path, "'required' entries must be strings");
                const std::string name = r.get<std::string>();
                auto it = std::find_if(n->properties.begin(), n->properties.end(),
                                       [&](const SchemaProperty &p) { return p.name == name; });
                if (it == n->properties.end()) {
                    addProperty(n, name, n->additional ? n->additional : any());
                    it = n->properties.end() - 1;
                }
                it->required = true;
                n->requiredMask |= uint64_t(1) << (it - n->properties.begin());
            }
        }

        // array
        n->items = any();
        if (s.contains("items")) {
            if (s.at("items").is_array())
                refuse(path, "tuple 'items' is not supported");
            n->items = compile(s.at("items"), path + "/items");
        }
        n->minItems = count(s, "minItems", 0, path);
        n->maxItems = count(s, "maxItems", UINT32_MAX, path);
        if (n->minItems > n->maxItems)
            refuse(path, "'minItems' is above 'maxItems'");

        // string
        n->minChars = count(s, "minLength", 0, path);
        n->maxChars = count(s, "maxLength", UINT32_MAX, path);
        if (n->minChars > n->maxChars)
            refuse(path, "'minLength' is above 'maxLength'");
    }

    void computeMinLengths()
    {
        for (auto &n : m_schema.m_nodes)
            n->minLen = kInfiniteLen;
        // Lengths only shrink; a pass with no change means the fixpoint (recursion included).
        for (size_t pass = 0; pass <= m_schema.m_nodes.size() + 1; ++pass) {
            bool changed = false;
            for (auto &n : m_schema.m_nodes) {
                const int64_t v = minLenOf(*n);
                if (v < n->minLen) {
                    n->minLen = v;
                    changed = true;
                }
            }
            if (!changed)
                break;
        }
    }

private:
    static int64_t minLenOf(const SchemaNode &n)
    {
        if (n.isEnum) {
            int64_t best = kInfiniteLen;
            for (const std::string &l : n.literals)
                best = std::min<int64_t>(best, static_cast<int64_t>(l.size()));
            return best;
        }
        if (!n.anyOf.empty()) {
            int64_t best = kInfiniteLen;
            for (const SchemaNode *b : n.anyOf)
                best = std::min(best, b->minLen);
            return best;
        }
        int64_t best = kInfiniteLen;
        if (n.types & SchemaNode::Object) {
            int64_t len = 2;
            int required = 0;
            for (const SchemaProperty &p : n.properties) {
                if (!p.required)
                    continue;
                len = satAdd(len, static_cast<int64_t>(p.canonical.size()) + 3 + (required++ ? 1 : 0));
                len = satAdd(len, p.schema->minLen);
            }
            best = std::min(best, len);
        }
        if (n.types & SchemaNode::Array) {
            const int64_t items = n.minItems;
            best = std::min(best, items == 0 ? 2 : satAdd(2 + items - 1, satMul(n.items->minLen, items)));
        }
        if (n.types & SchemaNode::String)
            best = std::min<int64_t>(best, 2 + static_cast<int64_t>(n.minChars));
        if (n.types & (SchemaNode::Number | SchemaNode::Integer))
            best = std::min<int64_t>(best, 1);
        if (n.types & (SchemaNode::Boolean | SchemaNode::Null))
            best = std::min<int64_t>(best, 4);
        return best;
    }

    void copyAny(SchemaNode *n)
    {
        SchemaNode *a = any();
        n->types = a->types;
        n->additional = a;
        n->items = a;
    }

    static uint8_t typeBit(const std::string &t, const std::string &path)
    {
        if (t == "object")
            return SchemaNode::Object;
        if (t == "array")
            return SchemaNode::Array;
        if (t == "string")
            return SchemaNode::String;
        if (t == "number")
            return SchemaNode::Number;
        if (t == "integer")
            return SchemaNode::Integer;
        if (t == "boolean")
            return SchemaNode::Boolean;
        if (t == "null")
            return SchemaNode::Null;
        refuse(path, "unknown type '" + t + "'");
    }

    static uint32_t count(const json &s, const char *key, uint32_t dflt, const std::string &path)
    {
        if (!s.contains(key))
            return dflt;
        const json &v = s.at(key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
            refuse(path, std::string("'") + key + "' must be a non-negative integer");
        return static_cast<uint32_t>(std::min<uint64_t>(v.get<uint64_t>(), UINT32_MAX));
    }

    void addProperty(SchemaNode *n, const std::string &name, const SchemaNode *schema)
    {
        if (n->properties.size() >= kMaxProperties)
            refuse("", "more than " + std::to_string(kMaxProperties) + " properties in one object");
        const std::string quoted = json(name).dump();
        n->properties.push_back({name, quoted.substr(1, quoted.size() - 2), schema, false});
    }

    const SchemaNode *resolveRef(const json &ref, const std::string &path)
    {
        if (!ref.is_string())
            refuse(path, "'$ref' must be a string");
        const std::string r = ref.get<std::string>();
        if (r.empty() || r[0] != '#')
            refuse(path, "only local references ('#/...') are supported, not '" + r + "'");
        if (auto it = m_refs.find(r); it != m_refs.end())
            return it->second;
        const json *target = nullptr;
        try {
            target = &m_doc.at(json::json_pointer(r.substr(1)));
        } catch (const json::exception &) {
            refuse(path, "'$ref' target '" + r + "' does not exist");
        }
        SchemaNode *n = m_schema.newNode();
        m_refs.emplace(r, n); // registered first so recursive references find it
        compileInto(n, *target, r);
        return n;
    }

    Schema &m_schema;
    const json &m_doc;
    SchemaNode *m_any = nullptr;
    std::map<std::string, const SchemaNode *> m_refs;
};

SchemaNode *Schema::newNode()
{
    m_nodes.push_back(std::make_unique<SchemaNode>());
    return m_nodes.back().get();
}

std::shared_ptr<const Schema> Schema::compile(std::string_view schemaJson)
{
    json doc;
    const bool empty = schemaJson.find_first_not_of(" \t\r\n") == std::string_view::npos;
    if (!empty) {
        try {
            doc = json::parse(schemaJson);
        } catch (const json::exception &e) {
            throw Error(ErrorCode::Argument, std::string("JSON schema is not valid JSON: ") + e.what());
        }
    } else {
        doc = json::object();
    }
    auto schema = std::make_shared<Schema>();
    SchemaCompiler c(*schema, doc);
    schema->m_any = c.any();
    SchemaNode *root = schema->newNode();
    c.compileInto(root, doc, "");
    schema->m_root = root;
    c.computeMinLengths();
    if (root->minLen >= kInfiniteLen)
        throw Error(ErrorCode::Unsupported, "JSON schema admits no finite document (check required recursion)");
    return schema;
}

std::shared_ptr<const Schema> Schema::anyObject() { return compile(R"({"type":"object"})"); }

} // namespace waste::text
