/* A second private library that needs the first: loaded after it, bound to the rank's copy. */
int counter_bump(void);
int twice_total;

int twice_bump(void)
{
    twice_total += counter_bump();
    return twice_total;
}
