// Round tick steps for the Planner's chart axes, so a reader sees 0, 0.02, 0.04 or 30, 40, 50
// rather than 1051, 2102, 3154: the step is 1, 2 or 5 times a power of ten.
#pragma once

// The smallest round step that splits `span` into at most `maxIntervals` intervals.
// Returns 0 when span is not a positive finite number or maxIntervals < 1 (no step exists).
double niceTickStep(double span, int maxIntervals);

// The digits after the decimal point that show every multiple of a round step exactly
// (0 for steps of 1 and up, 2 for 0.02). 0 for a step that is not positive.
int niceTickDecimals(double step);
