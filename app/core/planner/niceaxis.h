// Round tick steps for the Planner's chart axes, so a reader sees 0, 0.02, 0.04 or 30, 40, 50
// rather than 1051, 2102, 3154: the step is 1, 2 or 5 times a power of ten, and an axis runs
// from one multiple of it to another.
#pragma once

#include <functional>

// The smallest round step that splits `span` into at most `maxIntervals` intervals.
// Returns 0 when span is not a positive finite number or maxIntervals < 1 (no step exists).
double niceTickStep(double span, int maxIntervals);

// The digits after the decimal point that show every multiple of a round step exactly
// (0 for steps of 1 and up, 2 for 0.02). 0 for a step that is not positive.
int niceTickDecimals(double step);

// An axis range on multiples of a step.
struct NiceRange {
    double lo = 0;
    double hi = 1;
};

// [min, max] widened to multiples of `step`: from the one at or below min (never below 0) to
// the one at or above max, at least one step wide. Without a step (step <= 0): min to min + 1.
NiceRange niceTickRange(double min, double max, double step);

// The lines an axis from lo to hi draws at a step: one at each multiple, ends included,
// 2 to 12 of them; 5 without a step.
int niceTickCount(double lo, double hi, double step);

// The finest round step for [min, max], from `maxIntervals` intervals down to one, whose
// widest tick label plus `gap` fits each interval of a plot `room` px wide; the coarsest
// when none does, the finest while the plot has no width yet. labelWidth(value, step) is
// the width of the label written at a tick.
double fittingTickStep(double min, double max, int maxIntervals, double room, double gap,
                       const std::function<double(double value, double step)> &labelWidth);
