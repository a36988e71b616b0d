#include "cache/access_order.hpp"

namespace waste::cache {

AccessOrder accessOrder(const RoutingTrace &trace)
{
    AccessOrder a;
    const int E = trace.experts;
    a.keys.reserve(size_t(trace.accesses()));
    a.pass.reserve(a.keys.capacity());
    for (size_t t = 0; t < trace.tokens.size(); ++t) {
        a.passStart.push_back(int64_t(a.keys.size()));
        for (size_t l = 0; l < trace.tokens[t].size(); ++l)
            for (int e : trace.tokens[t][l]) {
                a.keys.push_back(int(l) * E + e);
                a.pass.push_back(int64_t(t));
            }
    }
    a.passStart.push_back(int64_t(a.keys.size()));
    a.nextUse.resize(a.keys.size());
    a.firstUse.assign(size_t(trace.layers) * size_t(E), AccessOrder::kNever);
    for (size_t i = a.keys.size(); i-- > 0;) {
        a.nextUse[i] = a.firstUse[size_t(a.keys[i])];
        a.firstUse[size_t(a.keys[i])] = int64_t(i);
    }
    return a;
}

} // namespace waste::cache
