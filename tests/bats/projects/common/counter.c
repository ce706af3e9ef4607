#include "counter.h"

int counter_value;

int counter_bump(void)
{
    return ++counter_value;
}
