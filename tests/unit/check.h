/* check.h — the unit tests use the one assertion family of tests/check.h (failure: exit(1)). */
#include "../check.h"
