// Writes each family's tiny tokenizer (convert/tiny_family_tokenizers) as a release folder,
// carries it into a container folder with the converter's side-file step, loads it there
// the way Model::open does, and prints the engine's ids for a corpus, so
// reference_ids.mjs can compare them with the reference implementations.
// usage: family_tokenizer_ids OUT_DIR CORPUS.json ARCH...
//   writes OUT_DIR/ARCH/release/*, OUT_DIR/ARCH/container/*, OUT_DIR/ARCH/ids.json
//   ({"plain": [[ids]...], "markup": [[ids]...]}, one list per corpus string)
#include "convert/model_source.hpp"
#include "convert/side_files.hpp"
#include "convert/tiny_family_tokenizers.hpp"
#include "text/tokenizer.hpp"
#include "text/unicode_props.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace {

// The release folder's side files as a ModelSource: the converter reads nothing else of it here.
class SideFilesOnly final : public waste::convert::ModelSource {
public:
    explicit SideFilesOnly(std::map<std::string, std::string> files) : m_files(std::move(files)) {}
    std::string configText() const override { return "{}"; }
    std::optional<std::string> sideFile(const std::string &name) const override
    {
        const auto it = m_files.find(name);
        return it == m_files.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    std::vector<std::string> tensorNames() const override { return {}; }
    waste::convert::SourceTensor info(const std::string &name) const override
    {
        throw waste::Error(waste::ErrorCode::Argument, "no tensor " + name);
    }
    void readRows(const waste::convert::SourceTensor &, int64_t, int64_t, float *) const override {}
    void readStored(const waste::convert::SourceTensor &, uint8_t *, uint8_t *) const override {}
    std::string identity() const override { return "tiny family tokenizer"; }
    int64_t totalBytes() const override { return 0; }

private:
    std::map<std::string, std::string> m_files;
};

std::string readAll(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::cerr << "usage: family_tokenizer_ids OUT_DIR CORPUS.json ARCH...\n";
        return 2;
    }
    namespace fs = std::filesystem;
    try {
        const nlohmann::json corpus = nlohmann::json::parse(readAll(argv[2]));
        for (int a = 3; a < argc; ++a) {
            const std::string arch = argv[a];
            const fs::path base = fs::path(argv[1]) / arch;
            const waste::convert::TinyFamilyTokenizer t =
                waste::convert::writeTinyFamilyTokenizer((base / "release").string(), arch, 1024);
            fs::create_directories(base / "container");
            waste::convert::writeSideFiles(SideFilesOnly(t.files), (base / "container").string(),
                                           nlohmann::ordered_json::object());
            const waste::text::Tokenizer tok =
                waste::text::Tokenizer::load((base / "container").string(), -1, t.eosId, arch);
            nlohmann::json out = {{"plain", nlohmann::json::array()}, {"markup", nlohmann::json::array()},
                                  {"bos", tok.bosId()}, {"eos", tok.eosId()}, {"written_bos", t.bosId},
                                  {"written_eos", t.eosId}, {"roundtrip", true}};
            for (const auto &s : corpus) {
                const std::string text = s.get<std::string>();
                const std::vector<int32_t> plain = tok.encode(text, false), markup = tok.encode(text, true);
                out["plain"].push_back(plain);
                out["markup"].push_back(markup);
                // Byte-level BPE loses nothing; Qwen's tokenizer composes the text (NFC) first.
                const std::string expect = arch.rfind("qwen3", 0) == 0 ? waste::text::unicode::nfc(text) : text;
                if (tok.decode(plain) != expect || tok.decode(markup) != expect)
                    out["roundtrip"] = false;
            }
            std::ofstream(base / "ids.json") << out.dump() << "\n";
        }
    } catch (const std::exception &e) {
        std::cerr << "family_tokenizer_ids: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
