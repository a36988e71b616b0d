#include "convert/side_files.hpp"

#include "convert/file_io.hpp"

#include <waste/waste.hpp>

#include <cstdlib>
#include <map>
#include <optional>

namespace waste::convert {

using ojson = nlohmann::ordered_json;

namespace {

ojson specialsFrom(const std::optional<std::string> &tokenizerConfig) {
    ojson list = ojson::array();
    if (!tokenizerConfig) return list;
    nlohmann::json tc;
    try {
        tc = nlohmann::json::parse(*tokenizerConfig);
    } catch (const std::exception &e) {
        throw Error(ErrorCode::Format, "tokenizer_config.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!tc.is_object() || !tc.contains("added_tokens_decoder") || !tc["added_tokens_decoder"].is_object()) return list;
    std::map<long long, std::string> byId;
    for (auto it = tc["added_tokens_decoder"].begin(); it != tc["added_tokens_decoder"].end(); ++it) {
        char *end = nullptr;
        const long long id = std::strtoll(it.key().c_str(), &end, 10);
        if (!end || *end || id < 0 || !it.value().is_object() || !it.value().contains("content") || !it.value()["content"].is_string())
            continue;
        byId[id] = it.value()["content"].get<std::string>();
    }
    for (const auto &[id, text] : byId) list.push_back({{"id", id}, {"text", text}});
    return list;
}

// vision.json from the source's vision_config (K3 style) and preprocessor_config.json.
std::optional<std::string> visionJsonFrom(const ModelSource &src, const ojson &config) {
    const ojson *outer = config.contains("_outer") ? &config["_outer"] : &config;
    if (!outer->contains("vision_config") || !(*outer)["vision_config"].is_object()) return std::nullopt;
    // Kimi K2.5's tower is not K3's; its container is text only (hf_names.cpp reads it past).
    if (outer->value("model_type", std::string()) == "kimi_k25") return std::nullopt;
    ojson v = (*outer)["vision_config"];
    if (!v.contains("text_hidden_size")) v["text_hidden_size"] = config.value("hidden_size", 0);
    if (outer->contains("media_placeholder_token_id")) v["media_placeholder_token_id"] = (*outer)["media_placeholder_token_id"];
    if (auto pre = src.sideFile("preprocessor_config.json")) {
        try {
            const ojson p = ojson::parse(*pre);
            const ojson &m = p.contains("media_proc_cfg") ? p["media_proc_cfg"] : p;
            if (m.contains("image_mean")) v["image_mean"] = m["image_mean"];
            if (m.contains("image_std")) v["image_std"] = m["image_std"];
        } catch (const std::exception &e) {
            throw Error(ErrorCode::Format, "preprocessor_config.json is not valid JSON (" + std::string(e.what()) + ")");
        }
    }
    return v.dump(1);
}

} // namespace

void writeSideFiles(const ModelSource &src, const std::string &out, const ojson &config) {
    if (auto tok = src.sideFile("tiktoken.model")) writeFileAtomic(joinPath(out, "tokenizer.model"), *tok);
    else if (auto tok2 = src.sideFile("tokenizer.model")) writeFileAtomic(joinPath(out, "tokenizer.model"), *tok2);
    const auto tokenizerConfig = src.sideFile("tokenizer_config.json");
    // A Hugging Face tokenizer travels whole: the engine reads tokenizer.json, and BOS/EOS
    // from tokenizer_config.json (Tokenizer::load).
    if (auto hf = src.sideFile("tokenizer.json")) writeFileAtomic(joinPath(out, "tokenizer.json"), *hf);
    if (tokenizerConfig) writeFileAtomic(joinPath(out, "tokenizer_config.json"), *tokenizerConfig);
    writeFileAtomic(joinPath(out, "specials.json"), specialsFrom(tokenizerConfig).dump(1));
    if (auto tpl = src.sideFile("chat_template.jinja")) {
        writeFileAtomic(joinPath(out, "chat_template.jinja"), *tpl);
    } else if (tokenizerConfig) {
        try {
            const auto tc = nlohmann::json::parse(*tokenizerConfig);
            if (tc.is_object() && tc.contains("chat_template") && tc["chat_template"].is_string())
                writeFileAtomic(joinPath(out, "chat_template.jinja"), tc["chat_template"].get<std::string>());
        } catch (const nlohmann::json::exception &) {
        }
    }
    if (auto vj = visionJsonFrom(src, config)) writeFileAtomic(joinPath(out, "vision.json"), *vj);
}

} // namespace waste::convert
