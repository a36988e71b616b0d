// A fixture for the include-order check: settings/ sits below chat/, so this include must be
// reported too.
#include "chat/chatcontroller.h"
