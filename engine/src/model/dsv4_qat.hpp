// The round trips DeepSeek V4 was trained with (QAT) and that its inference code applies to
// cached keys and indexer vectors, so the engine computes the model's own graph
// (docs/architectures/deepseek-v4-flash.md, "QAT round trips"; ds4.c's CPU reference paths):
// per block of values, a power-of-two scale 2^⌈log2(max(amax, floor) / qmax)⌉, the values
// divided by it, clamped to ±qmax, rounded to the nearest grid value (ties to even) and
// multiplied back. And the indexer's Hadamard rotation.
#pragma once

#include <cstdint>

namespace waste::model {

float roundE4m3(float x); // nearest FP8 e4m3fn value of x in [-448, 448]
float roundE2m1(float x); // nearest FP4 e2m1 value of x in [-6, 6]

// FP8 e4m3 (qmax 448, amax floor 1e-4) in blocks of `block` values (a last partial block alone).
void fp8RoundTrip(float *x, int64_t n, int64_t block);
// FP4 e2m1 (qmax 6, amax floor 6·2^-126) in blocks of `block` values (a last partial block alone).
void fp4RoundTrip(float *x, int64_t n, int64_t block);
// The Walsh–Hadamard transform in Sylvester (natural) order, scaled by n^-1/2; n a power of two.
void hadamard(float *x, int64_t n);

} // namespace waste::model
