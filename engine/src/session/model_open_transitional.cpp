// TRANSITIONAL — delete this file when the real Model::open lands (engine/src/session).
// It exists only so that the app and CLI link while the forward pass is being written;
// a duplicate-symbol link error means it is time to remove it.
#include "waste/waste.hpp"

namespace waste {

std::unique_ptr<Model> Model::open(const std::string &containerPath, const OpenOptions &)
{
    throw Error(ErrorCode::Unsupported,
                containerPath + ": this build's engine cannot run models yet (forward pass not landed)");
}

} // namespace waste
