// The generated Unicode tables (unicode_tables.cpp, written by
// engine/tools/gen_unicode_tables.py). Read them through unicode_props.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace waste::text::unicode {

// General categories in this order (the index is what the tables store).
enum Category : uint8_t {
    Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp,
    Cc, Cf, Cs, Co, Cn
};

struct CategoryRange { uint32_t start; uint8_t category; };   // holds until the next start
struct CodeRange { uint32_t first, last; };                   // inclusive
struct CombiningRange { uint32_t start; uint8_t ccc; };       // holds until the next start
struct Decomposition { uint32_t cp, first, second; };         // second 0: a single code point

extern const CategoryRange kCategoryRanges[];
extern const size_t kCategoryRangesCount;
extern const CodeRange kHanRanges[];
extern const size_t kHanRangesCount;
extern const CombiningRange kCombiningRanges[];
extern const size_t kCombiningRangesCount;
extern const Decomposition kCanonicalDecompositions[]; // sorted by cp
extern const size_t kCanonicalDecompositionsCount;
extern const uint32_t kCompositionExclusions[];        // sorted
extern const size_t kCompositionExclusionsCount;

} // namespace waste::text::unicode
