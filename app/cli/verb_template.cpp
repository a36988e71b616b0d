// `waste template`: renders an OpenAI-style chat request into the prompt segments the
// engine tokenizes ([text, is_markup]; markup may hold special tokens, text never does).
// Lets anyone check a chat format against a reference encoder without loading weights.
#include "verb.h"

#include <waste/chat.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>

namespace {

std::string readAll(const std::string &path)
{
    if (path == "-")
        return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open the request file");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string visible(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else
            out += c;
    }
    return out;
}

int runTemplate(const cli::Args &args)
{
    const auto requestPath = args.value("--request");
    if (!requestPath)
        throw cli::UsageError("--request FILE.json is required");
    const std::string formatName = args.text("--format", "");
    // FILE.json, or FILE.json#/json/pointer to pick a request inside a larger document.
    std::string path = *requestPath, pointer;
    if (const size_t hash = path.find("#/"); hash != std::string::npos) {
        pointer = path.substr(hash + 1);
        path.resize(hash);
    }
    nlohmann::ordered_json request;
    try {
        request = nlohmann::ordered_json::parse(readAll(path));
        if (!pointer.empty())
            request = request.at(nlohmann::ordered_json::json_pointer(pointer));
    } catch (const nlohmann::json::exception &e) {
        throw std::runtime_error(*requestPath + ": not a valid JSON request (" + e.what() + ")");
    }
    // Without --format: a container's chat format (one without a template is shown with the
    // engine's generic ChatML template); no container: K3.
    std::optional<waste::ChatFormat> format = waste::chatFormatNamed(formatName.empty() ? "k3" : formatName);
    if (!format)
        throw cli::UsageError("--format must be " + waste::chatFormatNameList() + ", not '" + formatName + "'");
    if (formatName.empty() && !args.positionals().empty()) {
        format = waste::containerChatFormat(args.positional(0));
        if (!waste::chatFormatTraits(*format).templated)
            format = waste::genericChatFormat();
    }
    // K3 requests may carry the media block of each image (image_prompts); they are placed as given.
    std::vector<std::string> mediaBlocks;
    if (const auto it = request.find("image_prompts"); it != request.end() && it->is_array())
        for (const auto &p : *it)
            if (p.is_string())
                mediaBlocks.push_back(p.get<std::string>());
    const waste::ChatSegments segments = waste::renderChat(*format, request.dump(), mediaBlocks);

    if (args.flag("--json")) {
        nlohmann::ordered_json out;
        out["format"] = waste::chatFormatName(*format);
        out["segments"] = nlohmann::ordered_json::array();
        for (const auto &s : segments)
            out["segments"].push_back({s.text, s.markup});
        std::cout << out.dump() << "\n";
    } else {
        for (const auto &s : segments)
            std::cout << (s.markup ? "markup " : "text   ") << visible(s.text) << "\n";
    }
    return 0;
}

WASTE_CLI_VERB({"template",
                "[MODEL] --request FILE.json [--format " + waste::chatFormatNameList("|") + "] [--json]",
                "render a chat request into prompt segments (markup vs ordinary text)",
                {{{"--request", cli::OptionKind::Value, "FILE[#/pointer]  OpenAI-style chat request (- for stdin)"},
                  {"--format", cli::OptionKind::Value, "NAME  " + waste::chatFormatNameList() + " (default: from MODEL, else k3)"},
                  {"--json", cli::OptionKind::Flag, "print {\"segments\": [[text, is_markup], ...]}"}},
                 0,
                 1},
                &runTemplate});

} // namespace
