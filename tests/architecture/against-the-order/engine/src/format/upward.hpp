// A fixture for the include-order check: format/ is the bottom of the engine, so this
// include of model/ must be reported (the check must fail on this tree).
#include "model/forward.hpp"
