// Constrained decoding: the recognizer accepts exactly the documents a schema
// allows, its completion distance is exact, and a random "model" sampling under the
// constraint always ends with a parseable document that matches the schema, within
// the token limit.
#include <gtest/gtest.h>

#include "text/constraint_factory.hpp"
#include "text/json_constraint.hpp"
#include "text/json_recognizer.hpp"
#include "text/json_schema.hpp"
#include "text/sampler.hpp"
#include "text/token_trie.hpp"
#include "text/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <random>

using nlohmann::json;
using namespace waste::text;

namespace {

const std::string kR3 = std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste";

bool accepts(const JsonRecognizer &rec, std::string_view text)
{
    auto s = rec.initial();
    for (char c : text)
        if (!rec.feed(s, static_cast<uint8_t>(c)))
            return false;
    return rec.canEnd(s);
}

// An independent check of a parsed value against the schema subset we support.
bool validates(const json &v, const json &schema, const json &root)
{
    if (schema.is_boolean())
        return schema.get<bool>();
    if (schema.contains("$ref"))
        return validates(v, root.at(json::json_pointer(schema.at("$ref").get<std::string>().substr(1))), root);
    if (schema.contains("allOf"))
        return validates(v, schema.at("allOf")[0], root);
    for (const char *kw : {"anyOf", "oneOf"}) {
        if (schema.contains(kw)) {
            if (schema.value("nullable", false) && v.is_null())
                return true;
            for (const json &alt : schema.at(kw))
                if (validates(v, alt, root))
                    return true;
            return false;
        }
    }
    if (schema.contains("const") || schema.contains("enum")) {
        if (schema.contains("const") && v == schema.at("const"))
            return true;
        if (schema.contains("enum"))
            for (const json &e : schema.at("enum"))
                if (v == e)
                    return true;
        return schema.value("nullable", false) && v.is_null();
    }
    if (schema.contains("type")) {
        std::vector<std::string> types;
        if (schema.at("type").is_array())
            types = schema.at("type").get<std::vector<std::string>>();
        else
            types.push_back(schema.at("type").get<std::string>());
        if (schema.value("nullable", false))
            types.push_back("null");
        bool ok = false;
        for (const std::string &t : types) {
            ok = ok || (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
                 (t == "string" && v.is_string()) || (t == "number" && v.is_number()) ||
                 (t == "integer" && (v.is_number_integer() || v.is_number_unsigned())) ||
                 (t == "boolean" && v.is_boolean()) || (t == "null" && v.is_null());
        }
        if (!ok)
            return false;
    }
    if (v.is_object()) {
        const json props = schema.value("properties", json::object());
        for (const json &r : schema.value("required", json::array()))
            if (!v.contains(r.get<std::string>()))
                return false;
        for (const auto &[k, x] : v.items()) {
            if (props.contains(k)) {
                if (!validates(x, props.at(k), root))
                    return false;
            } else if (schema.contains("additionalProperties")) {
                if (!validates(x, schema.at("additionalProperties"), root))
                    return false;
            }
        }
    }
    if (v.is_array()) {
        if (v.size() < schema.value("minItems", size_t(0)) || v.size() > schema.value("maxItems", SIZE_MAX))
            return false;
        if (schema.contains("items"))
            for (const json &x : v)
                if (!validates(x, schema.at("items"), root))
                    return false;
    }
    if (v.is_string()) {
        // length in code points
        size_t n = 0;
        for (unsigned char c : v.get<std::string>())
            n += (c & 0xC0) != 0x80;
        if (n < schema.value("minLength", size_t(0)) || n > schema.value("maxLength", SIZE_MAX))
            return false;
    }
    return true;
}

const std::vector<std::string> kSchemas = {
    // strict OpenAI-style object
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
        "score":{"type":"number"},"ok":{"type":"boolean"},"none":{"type":"null"}},
        "required":["name","age","score","ok","none"],"additionalProperties":false})",
    // enum, arrays, nested objects, nullable via type list
    R"({"type":"object","properties":{
        "color":{"enum":["red","green","blue"]},
        "tags":{"type":"array","items":{"type":"string","maxLength":5},"minItems":1,"maxItems":3},
        "point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
                 "required":["x","y"],"additionalProperties":false},
        "note":{"type":["string","null"]}},
        "required":["color","tags","point","note"],"additionalProperties":false})",
    // anyOf of objects and scalars, const
    R"({"type":"object","properties":{
        "shape":{"anyOf":[
            {"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},
             "required":["kind","r"],"additionalProperties":false},
            {"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"integer"},"h":{"type":"integer"}},
             "required":["kind","w","h"],"additionalProperties":false}]},
        "id":{"anyOf":[{"type":"integer"},{"type":"string"}]}},
        "required":["shape","id"],"additionalProperties":false})",
    // recursion through $defs
    R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
        "kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},
        "required":["v","kids"],"additionalProperties":false}},
        "type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"required":["tree"],
        "additionalProperties":false})",
    // optional properties, open object, numeric enum with a shared prefix
    R"({"type":"object","properties":{"a":{"type":"string"},"n":{"enum":[1,12,123]},
        "extra":{"type":"object"}},"required":["n"]})",
    // keys that need escaping, unicode
    R"({"type":"object","properties":{"quo\"te":{"type":"string","minLength":2},"héllo":{"type":"boolean"}},
        "required":["quo\"te","héllo"],"additionalProperties":false})",
};

} // namespace

TEST(JsonRecognizer, AcceptsValidAndRejectsInvalidDocuments)
{
    JsonRecognizer any(Schema::compile(""));
    for (const char *ok : {"{}", "[]", "0", "-1.5e+10", "\"a\\u00e9\\n\"", "true", "null", " {\"a\": [1, 2, {}]}",
                           "{\"k\":\"\xC3\xA9\xF0\x9F\x99\x82\"}", "[[[]]]", "123"})
        EXPECT_TRUE(accepts(any, ok)) << ok;
    for (const char *bad : {"{", "{\"a\"}", "[1,]", "01", "1.", "-", "\"\\x\"", "tru", "{} {}", "{'a':1}",
                            "\"\xC3\"", "\"\xC0\x80\"", "\"\\ud800\"", "\"a\nb\"", "[1 2]", "{\"a\":1,}", "1e"})
        EXPECT_FALSE(accepts(any, bad)) << bad;

    JsonRecognizer strict(Schema::compile(kSchemas[0]));
    EXPECT_TRUE(accepts(strict, R"({"name":"x","age":3,"score":1.5,"ok":true,"none":null})"));
    EXPECT_TRUE(accepts(strict, R"({"none":null,"ok":false,"score":-2,"age":-0,"name":""})")); // any order
    EXPECT_FALSE(accepts(strict, R"({"name":"x","age":3.5,"score":1,"ok":true,"none":null})")); // integer
    EXPECT_FALSE(accepts(strict, R"({"name":"x","age":3,"score":1,"ok":true})"));              // missing
    EXPECT_FALSE(accepts(strict, R"({"name":"x","name":"y","age":3,"score":1,"ok":true,"none":null})"));
    EXPECT_FALSE(accepts(strict, R"({"name":"x","age":3,"score":1,"ok":true,"none":null,"z":1})"));

    JsonRecognizer shapes(Schema::compile(kSchemas[2]));
    EXPECT_TRUE(accepts(shapes, R"({"shape":{"kind":"rect","w":1,"h":2},"id":"a"})"));
    EXPECT_TRUE(accepts(shapes, R"({"id":7,"shape":{"r":1.0,"kind":"circle"}})"));
    EXPECT_FALSE(accepts(shapes, R"({"shape":{"kind":"rect","r":1},"id":1})"));

    JsonRecognizer nums(Schema::compile(kSchemas[4]));
    EXPECT_TRUE(accepts(nums, R"({"n":1})"));
    EXPECT_TRUE(accepts(nums, R"({"n":12,"a":"x","zz":[1,{"q":null}]})"));
    EXPECT_FALSE(accepts(nums, R"({"n":2})"));
    EXPECT_FALSE(accepts(nums, R"({"n":1234})"));

    JsonRecognizer esc(Schema::compile(kSchemas[5]));
    EXPECT_TRUE(accepts(esc, "{\"quo\\\"te\":\"ab\",\"h\xC3\xA9llo\":true}"));
    EXPECT_FALSE(accepts(esc, "{\"quo\\\"te\":\"a\",\"h\xC3\xA9llo\":true}")); // minLength 2
}

TEST(JsonRecognizer, WhitespaceRunsAndDepthAreBounded)
{
    JsonRecognizer rec(Schema::compile(""), 4, 3);
    EXPECT_TRUE(accepts(rec, "[ \n [1]]"));
    EXPECT_FALSE(accepts(rec, "[    1]"));
    EXPECT_TRUE(accepts(rec, "[[[[1]]]]"));
    EXPECT_FALSE(accepts(rec, "[[[[[1]]]]]"));
}

TEST(JsonRecognizer, RefusesWhatItCannotEnforce)
{
    EXPECT_THROW(Schema::compile(R"({"type":"object","patternProperties":{"a":{}}})"), waste::Error);
    EXPECT_THROW(Schema::compile(R"({"not":{"type":"string"}})"), waste::Error);
    EXPECT_THROW(Schema::compile(R"({"$ref":"#/nowhere"})"), waste::Error);
    EXPECT_THROW(Schema::compile(R"({"$ref":"#"})"), waste::Error); // no finite document
    EXPECT_THROW(Schema::compile("{not json"), waste::Error);
    EXPECT_NO_THROW(Schema::compile(R"({"type":"string","description":"d","pattern":"x","format":"date"})"));
}

// From random reachable states, a byte that lowers minRemaining by exactly one always
// exists, and following such bytes ends in a complete document after exactly that many.
TEST(JsonRecognizer, CompletionDistanceIsExact)
{
    std::mt19937 rng(7);
    for (const std::string &schemaText : kSchemas) {
        JsonRecognizer rec(Schema::compile(schemaText));
        for (int trial = 0; trial < 40; ++trial) {
            auto s = rec.initial();
            const int walk = int(rng() % 60);
            for (int i = 0; i < walk; ++i) {
                std::vector<uint8_t> ok;
                for (int b = 0; b < 256; ++b) {
                    auto t = s;
                    if (rec.feed(t, uint8_t(b)))
                        ok.push_back(uint8_t(b));
                }
                if (ok.empty())
                    break;
                ASSERT_TRUE(rec.feed(s, ok[rng() % ok.size()]));
            }
            int64_t d = rec.minRemaining(s);
            ASSERT_LT(d, 100000) << schemaText;
            while (d > 0) {
                bool stepped = false;
                for (int b = 0; b < 256 && !stepped; ++b) {
                    auto t = s;
                    if (rec.feed(t, uint8_t(b)) && rec.minRemaining(t) == d - 1) {
                        s = t;
                        stepped = true;
                    }
                }
                ASSERT_TRUE(stepped) << schemaText << " distance " << d;
                --d;
            }
            EXPECT_TRUE(rec.canEnd(s)) << schemaText;
        }
    }
}

namespace {

// A vocabulary with all bytes plus JSON-ish multi-byte tokens, so tokens cross
// structural boundaries (`"}`, `":`, `],"` ...).
std::vector<std::string> jsonishVocab()
{
    std::vector<std::string> v;
    for (int b = 0; b < 256; ++b)
        v.emplace_back(1, char(b));
    for (const char *t : {"{\"", "\":", "\",\"", "\"}", "},", "}}", "]}", "],\"", "[\"", "\"]", "true", "false",
                          "null", "12", "0.", "e+", "-1", "name", "age", "\"name\":\"", "\": ", ", \"", "\\n", "\\u00",
                          "é", "🙂", "red", "green", "\"blue\"", "circle", "rect", "kind", "tree", "kids", "\":[",
                          "\"v\":", "{\"v\":1,\"kids\":[]}", "  ", "\n", "\t\"", "xyz", " the", "quo\\\"te"})
        v.emplace_back(t);
    v.emplace_back(); // an id without bytes (like a special): never offered
    return v;
}

struct RunResult {
    std::string text;
    int tokens = 0;
    bool ended = false;
};

RunResult runRandomModel(const std::shared_ptr<const TokenTrie> &trie, int32_t eos, const std::string &schema,
                         int maxTokens, uint32_t seed, size_t vocab)
{
    auto c = makeJsonConstraint(trie, eos, schema, maxTokens);
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 2.0f);
    SamplerParams sp;
    sp.temperature = 1.0f;
    sp.topK = (seed % 3 == 0) ? 0 : 40;
    sp.topP = (seed % 2 == 0) ? 1.0f : 0.9f;
    sp.seed = seed;
    Sampler sampler(sp);
    std::vector<bool> mask(vocab);
    std::vector<float> logits(vocab);
    RunResult r;
    for (int i = 0; i < maxTokens; ++i) {
        for (float &l : logits)
            l = noise(rng);
        logits[size_t(eos)] += 4.0f; // a model that likes to stop, to test early EOS masking
        c->allowed(mask);
        const int32_t tok = sampler.sample(logits, &mask);
        ++r.tokens;
        c->accept(tok);
        if (tok == eos) {
            r.ended = true;
            break;
        }
        r.text += trie->bytes(tok);
    }
    EXPECT_TRUE(c->complete());
    return r;
}

} // namespace

TEST(JsonConstraint, RandomModelAlwaysProducesValidDocumentsWithinTheLimit)
{
    auto vocab = jsonishVocab();
    const auto eos = int32_t(vocab.size());
    vocab.emplace_back(); // EOS has no bytes in the trie
    const auto trie = std::make_shared<const TokenTrie>(vocab);
    std::vector<std::string> schemas = kSchemas;
    schemas.push_back(""); // json_object
    int runs = 0;
    for (size_t si = 0; si < schemas.size(); ++si) {
        const json schemaDoc = schemas[si].empty() ? json{{"type", "object"}} : json::parse(schemas[si]);
        for (uint32_t seed = 1; seed <= 25; ++seed) {
            // From exactly enough for the shortest document (plus EOS) to plenty.
            const int64_t shortest = schemas[si].empty() ? 2 : Schema::compile(schemas[si])->root()->minLen;
            const int maxTokens = int(shortest) + 1 + int(seed * 7 % 90) * (seed % 5 != 0);
            const RunResult r = runRandomModel(trie, eos, schemas[si], maxTokens, seed * 31 + uint32_t(si), vocab.size());
            ++runs;
            EXPECT_TRUE(r.ended) << "schema " << si << " seed " << seed << ": " << r.text;
            EXPECT_LE(r.tokens, maxTokens);
            json v;
            ASSERT_NO_THROW(v = json::parse(r.text)) << "schema " << si << " seed " << seed << ": " << r.text;
            EXPECT_TRUE(v.is_object()) << r.text;
            EXPECT_TRUE(validates(v, schemaDoc, schemaDoc)) << "schema " << si << " seed " << seed << ": " << r.text;
        }
    }
    EXPECT_EQ(runs, int(schemas.size()) * 25);
}

TEST(JsonConstraint, WorksOnTheReferenceVocabulary)
{
    const Tokenizer tok = Tokenizer::load(kR3, -1, 307);
    const auto trie = std::make_shared<const TokenTrie>(TokenTrie::fromTokenizer(tok));
    for (size_t si = 0; si < kSchemas.size(); ++si) {
        const json schemaDoc = json::parse(kSchemas[si]);
        for (uint32_t seed = 1; seed <= 10; ++seed) {
            const RunResult r = runRandomModel(trie, tok.eosId(), kSchemas[si], 120, seed, size_t(tok.vocabSize()));
            ASSERT_TRUE(r.ended);
            json v;
            ASSERT_NO_THROW(v = json::parse(r.text)) << r.text;
            EXPECT_TRUE(validates(v, schemaDoc, schemaDoc)) << r.text;
        }
    }
}

TEST(JsonConstraint, SpecialsAreNeverAllowedAndEosOnlyWhenComplete)
{
    const Tokenizer tok = Tokenizer::load(kR3, -1, 307);
    const auto trie = std::make_shared<const TokenTrie>(TokenTrie::fromTokenizer(tok));
    auto c = makeJsonConstraint(trie, tok.eosId(), R"({"type":"object","properties":{"a":{"type":"string"}}})", 0);
    std::vector<bool> mask(size_t(tok.vocabSize()));
    c->allowed(mask);
    EXPECT_TRUE(mask['{']);
    EXPECT_TRUE(mask[' ']);
    EXPECT_FALSE(mask['[']);
    EXPECT_FALSE(mask[size_t(tok.eosId())]);
    for (int32_t id = 305; id < tok.vocabSize(); ++id)
        EXPECT_FALSE(mask[size_t(id)]) << id;
    for (int32_t id : tok.encode("{\"a\":\"x<|open|>\""))
        c->accept(id);
    c->allowed(mask);
    for (int32_t id = 305; id < tok.vocabSize(); ++id)
        EXPECT_FALSE(mask[size_t(id)]) << id;
    c->accept('}');
    EXPECT_TRUE(c->complete());
    c->allowed(mask);
    EXPECT_EQ(std::count(mask.begin(), mask.end(), true), 1);
    EXPECT_TRUE(mask[size_t(tok.eosId())]);
    EXPECT_THROW(c->accept('x'), waste::Error);
}

TEST(JsonConstraint, ForcedToolCallsMatchOneTool)
{
    const std::string tools = R"([
      {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
        "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city","unit"],
        "additionalProperties":false}}},
      {"type":"function","function":{"name":"add","parameters":{"type":"object",
        "properties":{"a":{"$ref":"#/$defs/num"},"b":{"$ref":"#/$defs/num"}},"required":["a","b"],
        "additionalProperties":false,"$defs":{"num":{"type":"integer"}}}}},
      {"type":"function","function":{"name":"noargs"}}])";
    auto vocab = jsonishVocab();
    const auto eos = int32_t(vocab.size());
    vocab.emplace_back();
    const auto trie = std::make_shared<const TokenTrie>(vocab);
    const json toolList = json::parse(tools);
    std::set<std::string> seen;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        const std::string schema = toolCallSchema(tools);
        const RunResult r = runRandomModel(trie, eos, schema, 150, seed, vocab.size());
        ASSERT_TRUE(r.ended);
        json call;
        ASSERT_NO_THROW(call = json::parse(r.text)) << r.text;
        const std::string name = call.at("name");
        seen.insert(name);
        for (const json &t : toolList) {
            if (t["function"]["name"] != name)
                continue;
            const json params = t["function"].value("parameters", json{{"type", "object"}});
            EXPECT_TRUE(validates(call.at("arguments"), params, params)) << r.text;
        }
    }
    EXPECT_GE(seen.size(), 2u);
    const json named = json::parse(toolCallSchema(tools, "add"));
    EXPECT_EQ(named["properties"]["name"]["const"], "add");
    EXPECT_EQ(named["properties"]["arguments"]["properties"]["a"]["$ref"], "#/properties/arguments/$defs/num");
    EXPECT_THROW(toolCallSchema(tools, "missing"), waste::Error);
}

TEST(JsonConstraint, MaskSpeedOnALargeVocabulary)
{
    // 160k distinct tokens of 1..10 bytes: the shape of a real vocabulary.
    std::mt19937 rng(3);
    std::vector<std::string> vocab;
    for (int b = 0; b < 256; ++b)
        vocab.emplace_back(1, char(b));
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyz  ,.\"{}[]:0123456789ETAOINSHRDLU";
    std::set<std::string> seen(vocab.begin(), vocab.end());
    while (vocab.size() < 160000) {
        std::string t;
        const int len = 2 + int(rng() % 9);
        for (int i = 0; i < len; ++i)
            t += alphabet[rng() % alphabet.size()];
        if (seen.insert(t).second)
            vocab.push_back(t);
    }
    const auto eos = int32_t(vocab.size());
    vocab.emplace_back();
    const auto t0 = std::chrono::steady_clock::now();
    const auto trie = std::make_shared<const TokenTrie>(vocab);
    const auto t1 = std::chrono::steady_clock::now();
    auto c = makeJsonConstraint(trie, eos, kSchemas[1], 400);
    std::vector<bool> mask(vocab.size());
    for (char ch : std::string(R"({"note":"inside a string )"))
        c->accept(static_cast<unsigned char>(ch));
    const int reps = 5;
    for (int i = 0; i < reps; ++i)
        c->allowed(mask);
    const auto t2 = std::chrono::steady_clock::now();
    const double buildMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double maskMs = std::chrono::duration<double, std::milli>(t2 - t1).count() / reps;
    const auto allowedCount = std::count(mask.begin(), mask.end(), true);
    std::printf("trie build %.1f ms, mask in a string %.1f ms (%ld of %zu allowed)\n", buildMs, maskMs,
                long(allowedCount), vocab.size());
    EXPECT_GT(allowedCount, 100000);
    EXPECT_LT(maskMs, 2000.0); // generous: sanitizer builds are slow
}

// The whole path: the engine's generation loop on the tiny reference container (random
// weights) with the public constraint factories. Every output parses and matches.
TEST(JsonConstraint, TinyModelAlwaysGeneratesSchemaValidJson)
{
    waste::OpenOptions opts;
    opts.directIo = false;
    auto model = waste::Model::open(kR3, opts);
    const auto prompt = model->tokenize("Describe a person as JSON:", false);
    for (size_t si = 0; si < 3; ++si) {
        const json schemaDoc = json::parse(kSchemas[si]);
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            model->resetState();
            waste::GenParams gp;
            gp.temperature = 1.0f;
            gp.seed = seed;
            gp.maxTokens = 160;
            gp.constraint = waste::makeJsonConstraint(*model, kSchemas[si], gp.maxTokens);
            const waste::GenResult r = model->generate(prompt, gp);
            EXPECT_LE(int(r.tokens.size()), gp.maxTokens);
            json v;
            ASSERT_NO_THROW(v = json::parse(r.text)) << "schema " << si << " seed " << seed << ": " << r.text;
            EXPECT_TRUE(validates(v, schemaDoc, schemaDoc)) << r.text;
        }
    }
    model->resetState();
    const std::string tools = R"([{"type":"function","function":{"name":"lookup","parameters":{"type":"object",
        "properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"],"additionalProperties":false}}}])";
    waste::GenParams gp;
    gp.temperature = 0.8f;
    gp.seed = 5;
    gp.maxTokens = 120;
    gp.constraint = waste::makeToolCallConstraint(*model, tools, "lookup", gp.maxTokens);
    const json call = json::parse(model->generate(prompt, gp).text);
    EXPECT_EQ(call.at("name"), "lookup");
    EXPECT_TRUE(call.at("arguments").at("q").is_string());
    EXPECT_TRUE(call.at("arguments").at("n").is_number_integer());
}

TEST(JsonRecognizer, AFreeKeyAtItsCapStillFinishesItsCharacter)
{
    // A key of an open object may run to 256 bytes; one that reaches the cap in the middle
    // of a character must still take that character's continuation bytes and then its
    // closing quote (a dead end here once crashed the sampler: no token was allowed).
    const JsonRecognizer rec(Schema::compile(R"({"type":"object","properties":{"message":{"type":"string"}},
        "required":["message"]})"));
    for (int ascii : {253, 254, 255}) {
        auto s = rec.initial();
        std::string doc = "{\"" + std::string(size_t(ascii), 'k') + "\xF0\x9F\x99\x82"; // U+1F642 across the cap
        for (char c : doc)
            ASSERT_TRUE(rec.feed(s, uint8_t(c))) << ascii;
        int continues = 0;
        for (int b = 0; b < 256; ++b) {
            auto t = s;
            continues += rec.feed(t, uint8_t(b));
        }
        EXPECT_GT(continues, 0) << ascii;
        EXPECT_TRUE(accepts(rec, doc + "\":1,\"message\":\"\"}")) << ascii;
    }
    auto s = rec.initial();
    for (char c : "{\"" + std::string(255, 'k') + "\xC3") // 255 bytes, then the first byte of é
        ASSERT_TRUE(rec.feed(s, uint8_t(c)));
    auto t = s;
    EXPECT_TRUE(rec.feed(t, 0xA9));
    EXPECT_TRUE(rec.feed(t, '"'));
    t = s;
    EXPECT_FALSE(rec.feed(t, '"')) << "a key cannot end inside a character";
}

TEST(JsonConstraint, UniformWalksNeverReachADeadEnd)
{
    // Whatever the model picks among the allowed tokens, something is always allowed next
    // until the document is complete: uniform picks (no model preference) write long free
    // keys and deep values, where the byte caps and the budget meet. Both document ends are
    // walked: a markup token (EOS) and text (the top-level value closing).
    auto vocab = jsonishVocab();
    const auto eos = int32_t(vocab.size());
    vocab.emplace_back();
    const auto trie = std::make_shared<const TokenTrie>(vocab);
    std::vector<std::string> schemas = kSchemas;
    // The reference MCP server's shapes: open objects (free keys), enums, defaults.
    schemas.push_back(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
        "properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]})");
    schemas.push_back(R"({"type":"object","properties":{"messageType":{"type":"string","enum":["error","success","debug"]},
        "includeImage":{"default":false,"type":"boolean"}},"required":["messageType"]})");
    schemas.push_back(R"({"type":"object","properties":{}})");
    int walks = 0, longKeys = 0;
    for (size_t si = 0; si < schemas.size(); ++si) {
        const auto schema = Schema::compile(schemas[si]);
        for (uint32_t seed = 1; seed <= 12; ++seed) {
            const bool textEnd = seed % 2 == 0;
            const int maxTokens = seed % 3 == 0 ? 0 : 200 + int(seed) * 70;
            JsonConstraint c(trie, textEnd ? -1 : eos, schema, maxTokens);
            const JsonRecognizer rec(schema);
            std::mt19937 rng(seed * 977 + uint32_t(si));
            std::vector<bool> mask(vocab.size());
            std::string text;
            int steps = 0;
            for (; steps < 1500; ++steps) {
                if (textEnd && c.closed())
                    break;
                c.allowed(mask);
                std::vector<int32_t> ok, wide; // wide: tokens of bytes past ASCII (a lead or continuation)
                for (size_t id = 0; id < mask.size(); ++id)
                    if (mask[id]) {
                        ok.push_back(int32_t(id));
                        const std::string &b = trie->bytes(int32_t(id));
                        if (b.size() == 1 && uint8_t(b[0]) >= 0x80)
                            wide.push_back(int32_t(id));
                    }
                ASSERT_FALSE(ok.empty()) << "schema " << si << " seed " << seed << " after: " << text;
                // Half the picks write characters byte by byte, as a tiny model writing
                // non-Latin text does, so characters straddle every cap.
                const std::vector<int32_t> &from = !wide.empty() && rng() % 2 ? wide : ok;
                const int32_t tok = from[rng() % from.size()];
                c.accept(tok);
                if (tok == eos)
                    break;
                text += trie->bytes(tok);
            }
            ++walks;
            longKeys += text.size() > 300;
            if (maxTokens > 0) {
                EXPECT_LE(steps, maxTokens) << "schema " << si << " seed " << seed;
                EXPECT_TRUE(c.complete()) << "schema " << si << " seed " << seed << ": " << text;
            }
        }
    }
    EXPECT_EQ(walks, int(schemas.size()) * 12);
    EXPECT_GT(longKeys, 0) << "the walks never wrote a long document; the test lost its reach";
}
