#include "planner/niceaxis.h"

#include <algorithm>
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

NiceRange niceTickRange(double min, double max, double step)
{
    if (!(step > 0))
        return {min, min + 1};
    // The tolerance keeps an end that is already a multiple (40 / 10 = 3.9999999999) there.
    const double lo = std::max(0.0, std::floor(min / step + 1e-9) * step);
    return {lo, std::max(lo + step, std::ceil(max / step - 1e-9) * step)};
}

int niceTickCount(double lo, double hi, double step)
{
    if (!(step > 0))
        return 5;
    // Math.round's rounding (halves up), as the chart's tick count always had.
    const double lines = std::floor((hi - lo) / step + 0.5) + 1;
    if (!(lines >= 2)) // NaN included
        return 2;
    return static_cast<int>(std::min(lines, 12.0));
}

double fittingTickStep(double min, double max, int maxIntervals, double room, double gap,
                       const std::function<double(double value, double step)> &labelWidth)
{
    double step = 0;
    for (int n = maxIntervals; n >= 1; --n) {
        step = niceTickStep(max - min, n);
        if (!(step > 0) || !(room > 0))
            return step;
        const NiceRange r = niceTickRange(min, max, step);
        const int intervals = static_cast<int>(std::floor((r.hi - r.lo) / step + 0.5));
        double widest = 0;
        for (int i = 0; i <= intervals; ++i)
            widest = std::max(widest, labelWidth(r.lo + i * step, step));
        if (room / intervals >= widest + gap)
            return step;
    }
    return step;
}
