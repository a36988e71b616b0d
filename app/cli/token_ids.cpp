#include "token_ids.h"

#include "args.h"

namespace cli {

std::vector<int32_t> parseTokenIds(const std::string &text, int vocab)
{
    std::vector<int32_t> ids;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = text.find(',', at);
        const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        const bool digits = !item.empty() && item.size() <= 10 && item.find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            throw UsageError("--ids: '" + item + "' is not a token id; give comma-separated integers, e.g. --ids 1,2,3");
        const long long id = std::stoll(item);
        if (id >= vocab)
            throw UsageError("--ids: token id " + item + " is out of range [0, " + std::to_string(vocab) +
                             ") for this model's vocabulary");
        ids.push_back(static_cast<int32_t>(id));
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    return ids;
}

} // namespace cli
