// vision.json: the geometry of the vision tower and the image preprocessing constants.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace waste::vision {

struct VisionConfig {
    int hidden = 1024;          // D  (vt_hidden_size)
    int heads = 12;             // nH (vt_num_attention_heads)
    int qkv = 1536;             // Q  (qkv_hidden_size); head dim = Q / nH
    int intermediate = 4096;    // I  (vt_intermediate_size)
    int layers = 27;            // nV (vt_num_hidden_layers)
    int posHeight = 64;         // PH (init_pos_emb_height)
    int posWidth = 64;          // PW (init_pos_emb_width)
    int textHidden = 0;         // T  (text_hidden_size; 0 = take the text model's hidden size)
    int patchSize = 14;
    int64_t mediaTokenId = -1;  // media_placeholder_token_id (<|media_pad|>)
    int maxPatches = 1024;      // MP
    std::array<float, 3> mean{0.5f, 0.5f, 0.5f};
    std::array<float, 3> stdev{0.5f, 0.5f, 0.5f};

    int headDim() const { return qkv / heads; }
};

// Reads <container>/vision.json with the reference engine's rules (numbers truncated for integer
// fields, a non-number value means the default). Returns false when the file does not exist.
// Throws Error(Format) when it is not JSON.
bool readVisionConfig(const std::string &containerDir, VisionConfig &out);

// The §1.1 range checks against the text model; throws Error(Format) naming the bad key.
void validateVisionConfig(VisionConfig &cfg, int textHidden, int vocabSize, const std::string &containerDir);

} // namespace waste::vision
