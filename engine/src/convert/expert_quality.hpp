// What re-encoding a release's experts costs in quality, as the converter's own tests
// measure it: the relative RMS error of the worst expert matrix against the source
// weights. The Convert page quotes these figures; the tests that measure them check
// that they still hold (so a change to an encoder cannot leave the page saying less).
#pragma once

namespace waste::convert::quality {

// VQ3R of the tiny K3's MXFP4 experts (tst_convert_k3).
inline constexpr double kVq3rOnMxfp4 = 0.208;
// VQ3R of the tiny Kimi-Linear's bf16 experts (tst_convert_container).
inline constexpr double kVq3rOnBf16 = 0.184;
// INT4 groups of 32 (q4) of the tiny K3's bf16 experts (tst_native_experts).
inline constexpr double kQ4OnBf16 = 0.099;
// How far a measurement may move before the quoted figure has to be updated.
inline constexpr double kSlack = 0.02;

} // namespace waste::convert::quality
