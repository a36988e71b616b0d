// What the vision tower adds to the RAM plan (k3-vision-math §9), from the manifest and
// vision.json alone. The planner reports it apart and adds it to the floor only when an
// image is given, so it comes out of the expert cache.
#pragma once

#include <cstdint>
#include <string>

namespace waste::vision {

struct VisionMemory {
    int64_t weightBytes = 0;  // trunk entries outside the tensor prefix (the tower and projector)
    int64_t workingBytes = 0; // queued rows, one patch tensor, tower activations, largest decode
    int64_t total() const { return weightBytes + workingBytes; }
};

// 0 / 0 when the manifest has an empty tensor prefix (the tower is then part of the trunk)
// or nothing lies outside it. Throws Error(Io/Format) when the manifest cannot be read.
VisionMemory visionMemory(const std::string &containerDir);

} // namespace waste::vision
