/* A user's library with globals of its own: a counter the program reads directly, one only
 * the library sees, and how many times its constructor ran. */
int counter_value;
int counter_inits;
static int counter_hidden;

__attribute__((constructor)) static void counter_init(void)
{
    counter_inits++;
}

int counter_bump(void)
{
    counter_hidden++;
    return ++counter_value * 100 + counter_hidden * 10 + counter_inits;
}
