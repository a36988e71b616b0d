#include "planner/niceaxis.h"

#include <cmath>
#include <initializer_list>

double niceTickStep(double span, int maxIntervals)
{
    if (!(span > 0) || !std::isfinite(span) || maxIntervals < 1)
        return 0;
    const double raw = span / maxIntervals;
    const double base = std::pow(10.0, std::floor(std::log10(raw)));
    // The decade below too: log10 can land a hair off an exact power of ten.
    for (const double power : {base / 10, base, base * 10})
        for (const double m : {1.0, 2.0, 5.0}) {
            const double step = m * power;
            // A relative tolerance: 0.3 / 0.1 is 2.9999999999999996, and 3 intervals fit.
            if (span / step <= maxIntervals * (1 + 1e-9))
                return step;
        }
    return base * 10;
}

int niceTickDecimals(double step)
{
    if (!(step > 0) || !std::isfinite(step))
        return 0;
    const int d = -static_cast<int>(std::floor(std::log10(step) + 1e-9));
    return d > 0 ? d : 0;
}
